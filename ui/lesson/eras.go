package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// ModernFunc returns a client for a second fixture in the modern era
// (--era modern), not connected yet, and how to connect it. The client
// declares elicitation and accepts what it is asked: the lesson plays the
// user. The lesson closes it.
type ModernFunc func() (*client.Client, client.Dialer, error)

// modernWait bounds the modern half of the eras step.
const modernWait = 30 * time.Second

// resultMsg carries the text of a lesson call's result.
type resultMsg struct {
	label string
	text  string
}

// modernMsg carries the transcript of the modern exchange.
type modernMsg struct {
	lines []string
	err   error
}

// callWait starts a lesson call like call and returns a command that waits
// for its result text.
func (m *Model) callWait(label, tool string, args map[string]any) tea.Cmd {
	raw, _ := json.Marshal(args)
	call := m.c.GoTool(context.Background(), tool, raw, client.CallOptions{})
	if id, ok := call.ID.Int64(); ok {
		m.ids[label] = id
		m.trail.labels[id] = label
	}
	return func() tea.Msg {
		raw, err := call.Wait()
		if err != nil {
			return resultMsg{label, err.Error()}
		}
		return resultMsg{label, firstText(raw)}
	}
}

// firstText is the first text block of a tool result, or the raw result.
func firstText(raw json.RawMessage) string {
	var r mcp.CallToolResult
	if json.Unmarshal(raw, &r) != nil || len(r.Content) == 0 || r.Content[0].Type != "text" {
		return string(raw)
	}
	return r.Content[0].Text
}

// modernCmd runs the modern half of the eras step off the UI loop.
func (m *Model) modernCmd() tea.Cmd {
	start := m.opts.Modern
	if start == nil {
		return func() tea.Msg {
			return modernMsg{err: fmt.Errorf("it needs a server command that takes --era modern, like sonde's fixture (not --url)")}
		}
	}
	return func() tea.Msg {
		lines, err := runModern(start)
		return modernMsg{lines: lines, err: err}
	}
}

// runModern starts the modern fixture, calls confirm, and returns the
// exchange as transcript lines; the client is closed before it returns.
func runModern(start ModernFunc) ([]string, error) {
	c, sub, ctx, cancel, err := startAside(start, modernWait)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer c.Close()
	_, _, err = c.CallTool(ctx, "confirm", json.RawMessage(`{"message":"Proceed?"}`), client.CallOptions{})
	c.Close()
	var evs []client.Event
	for ev := range sub.C {
		evs = append(evs, ev)
	}
	return transcript(evs), err
}

// startAside starts a client the lesson runs beside the session (the eras
// and reorder steps): subscribed before it connects, connected, past its
// handshake, within wait. On success the caller closes the client and
// cancels ctx; on error nothing is left running.
func startAside(start func() (*client.Client, client.Dialer, error), wait time.Duration) (*client.Client, *client.Subscription, context.Context, context.CancelFunc, error) {
	c, dial, err := start()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sub := c.Subscribe(4096)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	if err := c.Connect(dial); err != nil {
		cancel()
		c.Close()
		return nil, nil, nil, nil, err
	}
	if _, err := c.Initialize(ctx); err != nil {
		cancel()
		c.Close()
		return nil, nil, nil, nil, err
	}
	return c, sub, ctx, cancel, nil
}

// transcript turns the modern client's events into one line per frame.
func transcript(evs []client.Event) []string {
	retryOf := map[jsonrpc.ID]jsonrpc.ID{}
	for _, ev := range evs {
		if ev.Kind == client.EvRequest && ev.Req.RetryOf.IsValid() {
			retryOf[ev.Req.ID] = ev.Req.RetryOf
		}
	}
	var lines []string
	for _, ev := range evs {
		if ev.Kind != client.EvFrame || ev.Frame.Msg.Kind == jsonrpc.KindNotification {
			continue
		}
		f := ev.Frame
		if f.Dir == client.Out {
			line := fmt.Sprintf("-> id %s %s", f.Msg.ID, f.Msg.Method)
			if prev, ok := retryOf[f.Msg.ID]; ok {
				line += fmt.Sprintf(" confirm, retry of id %s with inputResponses and requestState", prev)
			} else if f.Msg.Method == mcp.MethodToolsCall {
				line += " confirm"
			}
			lines = append(lines, line)
			continue
		}
		detail := f.Detail
		if f.Verdict == client.VerdictResolved && !f.InputRequired && f.Msg.Method == "" {
			if t := firstText(f.Msg.Result); t != string(f.Msg.Result) {
				detail += ": " + fmt.Sprintf("%q", t)
			}
		}
		lines = append(lines, fmt.Sprintf("<- id %s %s", f.Msg.ID, detail))
	}
	return lines
}

// erasText is the narration of the eras step.
func (m *Model) erasText() string {
	legacy := m.results["confirm"]
	if legacy == "" {
		legacy = m.outcome("confirm")
	}
	modern := "running…"
	switch {
	case m.modernErr != nil:
		modern = "not shown: " + textfmt.CleanBlock(m.modernErr.Error())
	case m.modern != nil:
		lines := make([]string, len(m.modern))
		for i, l := range m.modern {
			lines[i] = textfmt.Escape(l) // what the server sent: a method, an id, a detail
		}
		modern = strings.Join(lines, "\n")
	}
	return fmt.Sprintf("Legacy, this session: id %s called confirm, and while it was pending the server sent "+
		"a request of its own, elicitation/create (srv in Pending), which the dialog puts to you: space ticks "+
		"confirm, ctrl+s accepts (ctrl+x declines). The tool says: %s\n\n"+
		"Modern (2026-07-28), a second fixture with --era modern: the server never sends requests. It "+
		"answers input_required, and sonde answers for it (the lesson accepts) and retries under a new id:\n%s\n\n"+
		"Press space.", m.id("confirm"), legacy, modern)
}

// updateEras records the results of the eras step.
func (m *Model) updateEras(msg tea.Msg) {
	switch msg := msg.(type) {
	case resultMsg:
		m.results[msg.label] = textfmt.CleanBlock(msg.text) // the tool's text, or an error: the server's words
	case modernMsg:
		m.modern, m.modernErr = msg.lines, msg.err
		if m.modern == nil && msg.err == nil {
			m.modern = []string{}
		}
	}
}

// Accept answers the modern fixture's elicitation as the lesson's user:
// accept, confirm true. Other input requests are refused.
func Accept(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method != "elicitation/create" {
		return nil, fmt.Errorf("the lesson answers elicitation/create only, not %s", method)
	}
	return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
}
