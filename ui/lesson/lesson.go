// Package lesson is the scripted walk-through of `sonde demo`: a narration
// pane that, one step per key press, drives the fixture server through the
// cases every MCP client must get right (out-of-order answers, a timeout
// followed by a late answer, a cancel, a crash) while the other panes show
// what happens. A toggle shows what a client that matched answers in FIFO
// order would have done with the same frames.
//
// Messages: Next returns commands that do the step's I/O; the last step
// returns RestartMsg, which the root handles by restarting the server so the
// user keeps a live session.
package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// RestartMsg asks the root to restart the server.
type RestartMsg struct{}

// Options tune the lesson's timings (tests make them short).
type Options struct {
	Slow        time.Duration // the slow call of step 1 (default 3s)
	Timeout     time.Duration // the timeout of step 3 (default 1s)
	LateAnswer  time.Duration // when the server answers that call anyway (default 2.5s)
	CrashAfter  time.Duration // the crash tool's delay (default 600ms)
	PendingLong time.Duration // calls that stay pending (default 60s)
	// Modern starts the modern-era fixture of the eras step (nil: that
	// half of the step is skipped, with a note).
	Modern ModernFunc
	// Reorder starts the server behind sonde tap of the reorder step (nil:
	// the step says why it is not shown).
	Reorder ReorderFunc
	// Hold sets a breakpoint (a filter query) on the session, for the
	// step where the learner lets two held answers go (nil: the step
	// says why it is not shown).
	Hold func(expr string) error
}

func (o *Options) fill() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Slow, 3*time.Second)
	def(&o.Timeout, time.Second)
	def(&o.LateAnswer, 2500*time.Millisecond)
	def(&o.CrashAfter, 600*time.Millisecond)
	def(&o.PendingLong, 60*time.Second)
}

// Model is the lesson pane.
type Model struct {
	st   *theme.Styles
	opts Options
	keys keyMap
	c    *client.Client

	step  int
	fifo  bool
	w, h  int
	now   time.Time
	ids   map[string]int64 // lesson call label -> request id
	trail trail

	results   map[string]string // lesson call label -> result text (eras step)
	modern    []string          // the modern exchange, once it ran
	modernErr error

	reordered  *Reordered // what the reorder step saw, once it ran
	reorderErr error
	holdErr    error // the hold step's breakpoint could not be set
}

// New returns the lesson at its first step.
func New(st *theme.Styles, opts Options) *Model {
	opts.fill()
	return &Model{st: st, opts: opts, keys: defaultKeyMap(), ids: map[string]int64{}, results: map[string]string{},
		trail: newTrail()}
}

// Attach gives the lesson the session it drives (after each handshake).
func (m *Model) Attach(c *client.Client) { m.c = c }

// Step returns the index of the current step.
func (m *Model) Step() int { return m.step }

// Steps returns how many steps the lesson has.
func Steps() int { return len(script) }

// Next moves to the next step and returns its action.
func (m *Model) Next() tea.Cmd {
	if m.c == nil || m.step >= len(script)-1 {
		return nil
	}
	m.step++
	return script[m.step].act(m)
}

// ToggleFIFO switches the FIFO comparison on or off.
func (m *Model) ToggleFIFO() { m.fifo = !m.fifo }

// SetSize sets the inner size.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetNow sets the clock.
func (m *Model) SetNow(t time.Time) { m.now = t }

// Apply records tools/call requests and every response, for the FIFO view.
func (m *Model) Apply(evs []client.Event) { m.trail.apply(evs) }

// Update handles the results of the lesson's own commands (its keys are
// the global ones).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	m.updateEras(msg)
	if msg, ok := msg.(reorderMsg); ok {
		m.reordered, m.reorderErr = msg.r, msg.err
	}
	return nil
}

// Finished reports whether the lesson is at its last step (the session is
// the user's: space no longer belongs to the lesson).
func (m *Model) Finished() bool { return m.step == len(script)-1 }

// Capturing is always false: the lesson has no text input.
func (m *Model) Capturing() bool { return false }

// Reset keeps the lesson where it is: a restart is part of it.
func (m *Model) Reset() {}

// Title names the step.
func (m *Model) Title() string {
	t := fmt.Sprintf("Lesson %d/%d: %s", m.step+1, len(script), script[m.step].title)
	if m.fifo {
		t += " · FIFO view"
	}
	return t
}

// Keys are the lesson's keys.
func (m *Model) Keys() help.KeyMap { return m.keys }

// View shows the narration, or the FIFO comparison.
func (m *Model) View() string {
	if m.fifo {
		return textfmt.Lines(m.fifoView(), m.w, m.h)
	}
	text := script[m.step].text(m)
	footer := m.st.Subtle.Render("space: next step · o: what a FIFO client would do · tab: other panes")
	if m.step == len(script)-1 {
		footer = m.st.Subtle.Render("the session is yours · tab to Tools and press enter to call · ctrl+r restarts")
	}
	// The step's next action (its last paragraph, "Press space…") is
	// pinned above the footer, so a short pane never hides it.
	body, next := text, ""
	if i := strings.LastIndex(text, "\n\n"); i >= 0 && strings.Contains(strings.ToLower(text[i:]), "press ") {
		body, next = text[:i], text[i+2:]
	}
	lines := strings.Split(wrap(body, m.w), "\n")
	var nextLines []string
	if next != "" {
		nextLines = strings.Split(wrap(m.st.Accent.Render(next), m.w), "\n")
	}
	room := max(m.h-1-len(nextLines), 0)
	if len(lines) > room {
		// Too short to show it all: say so rather than cut silently.
		lines = append(lines[:max(room-1, 0)], m.st.Warn.Render("… more: z zooms this pane"))
		lines = lines[:room]
	}
	for len(lines) < room {
		lines = append(lines, "")
	}
	lines = append(lines, nextLines...)
	return textfmt.Lines(strings.Join(append(lines, footer), "\n"), m.w, m.h)
}

// call starts a lesson call in the background and remembers its id.
func (m *Model) call(label, tool string, args map[string]any, timeout time.Duration) {
	raw, _ := json.Marshal(args)
	call := m.c.GoTool(context.Background(), tool, raw, client.CallOptions{Timeout: timeout})
	if id, ok := call.ID.Int64(); ok {
		m.ids[label] = id
		m.trail.labels[id] = label
	}
}

// id renders the id of a lesson call ("id 2"), or "…" before it exists.
func (m *Model) id(label string) string {
	if id, ok := m.ids[label]; ok {
		return jsonrpc.Int(id).String()
	}
	return "…"
}

// outcome describes the current state of a lesson call.
func (m *Model) outcome(label string) string {
	id, ok := m.ids[label]
	if !ok {
		return "not sent yet"
	}
	o, ok := m.trail.outcomes[id]
	if !ok {
		return m.st.Accent.Render("pending")
	}
	s := m.st.State(string(o.state)).Render(string(o.state))
	if o.latency > 0 {
		s += " after " + textfmt.Dur(o.latency)
	}
	return s
}

// keyMap lists the lesson keys for help (handled by the root).
type keyMap struct{ Next, FIFO key.Binding }

func defaultKeyMap() keyMap {
	return keyMap{
		Next: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "next lesson step")),
		FIFO: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "FIFO view")),
	}
}

func (k keyMap) ShortHelp() []key.Binding  { return []key.Binding{k.Next, k.FIFO} }
func (k keyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Next, k.FIFO}} }

// nbHyphen stands in for "-" while the text is wrapped: the wrapper always
// breaks after a hyphen, which would cut a flag such as --max-pending
// across two lines.
const nbHyphen = "\u2011"

// wrap fits s to w cells a line, breaking only at spaces (a word longer
// than a line is still cut).
func wrap(s string, w int) string {
	out := lipgloss.NewStyle().Width(max(w, 1)).Render(strings.ReplaceAll(s, "-", nbHyphen))
	return strings.ReplaceAll(out, nbHyphen, "-")
}
