package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// FaultRule is one fault rule of a watched tap (sonde tap --fault) and
// what it did so far.
type FaultRule struct {
	N       int    // its number
	Text    string // the rule as given
	On      bool
	Matched int // frames its match items held for
	Fired   int // times it acted
}

// WatchedFaults is what a Watched offers when it can list its tap's fault
// rules and turn them on and off while the host talks (F in the watch
// mode; the tap answers through the session's socket, as sonde faults).
type WatchedFaults interface {
	// Faults lists the rules (none: the tap has no fault rules).
	Faults(ctx context.Context) ([]FaultRule, error)
	// SetFault turns rule n on or off and lists the rules after it.
	SetFault(ctx context.Context, n int, on bool) ([]FaultRule, error)
}

// faultsWait bounds a request to the tap about its rules.
const faultsWait = 10 * time.Second

// faultsMsg carries the rules the tap listed (after a change, when set).
type faultsMsg struct {
	rules []FaultRule
	err   error
}

// faultsCmd asks the tap for its rules (n > 0: turns rule n on or off
// first).
func faultsCmd(src WatchedFaults, n int, on bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), faultsWait)
		defer cancel()
		var rules []FaultRule
		var err error
		if n > 0 {
			rules, err = src.SetFault(ctx, n, on)
		} else {
			rules, err = src.Faults(ctx)
		}
		return faultsMsg{rules: rules, err: err}
	}
}

// watchFaults is the source's WatchedFaults, or nil.
func (m *Model) watchFaults() WatchedFaults {
	if m.wt == nil {
		return nil
	}
	f, _ := m.wt.src.(WatchedFaults)
	return f
}

// showFaults opens the rules' dialog, or brings the open one up to date;
// a tap without rules, or an error, is said in the status bar.
func (m *Model) showFaults(msg faultsMsg) {
	d, open := m.dlg.(*faultsDialog)
	switch {
	case msg.err != nil && open:
		d.err = msg.err
	case msg.err != nil:
		m.wt.note = "fault rules: " + msg.err.Error()
	case len(msg.rules) == 0 && !open:
		m.wt.note = "this session's tap has no fault rules (sonde tap --fault)"
	case open:
		d.rules, d.err = msg.rules, nil
		d.cur = list.Clamp(d.cur, len(d.rules))
	case m.dlg == nil:
		m.openDialog(newFaultsDialog(m.styles, m.watchFaults(), msg.rules))
	}
}

// faultsDialog lists a watched tap's fault rules; space turns the one
// under the cursor on or off (through the tap), esc closes.
type faultsDialog struct {
	st    *theme.Styles
	src   WatchedFaults
	rules []FaultRule
	err   error
	cur   int
	w, h  int
	keys  faultsKeys
}

type faultsKeys struct {
	list.KeyMap
	Toggle, Close key.Binding
}

func (k faultsKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Toggle, k.Close}
}
func (k faultsKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Home, k.End}, {k.Toggle, k.Close}}
}

func newFaultsDialog(st *theme.Styles, src WatchedFaults, rules []FaultRule) *faultsDialog {
	return &faultsDialog{st: st, src: src, rules: rules, keys: faultsKeys{
		KeyMap: list.DefaultKeyMap(),
		Toggle: key.NewBinding(key.WithKeys("space", "enter"), key.WithHelp("space", "turn on/off")),
		Close:  key.NewBinding(key.WithKeys("esc", "F"), key.WithHelp("esc", "close")),
	}}
}

func (d *faultsDialog) Title() string     { return "fault rules · sonde tap --fault" }
func (d *faultsDialog) Keys() help.KeyMap { return d.keys }
func (d *faultsDialog) Capturing() bool   { return false }
func (d *faultsDialog) SetSize(w, h int)  { d.w, d.h = w, h }

func (d *faultsDialog) Update(msg tea.Msg) (answer.Action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return answer.None, nil
	}
	switch {
	case key.Matches(k, d.keys.Close):
		return answer.Later, nil
	case key.Matches(k, d.keys.Toggle) && d.cur < len(d.rules):
		r := d.rules[d.cur]
		return answer.None, faultsCmd(d.src, r.N, !r.On)
	}
	if n, ok := d.keys.Delta(k, max(d.h-3, 1)); ok {
		d.cur = list.Clamp(d.cur+n, len(d.rules))
	}
	return answer.None, nil
}

func (d *faultsDialog) View() string {
	out := []string{d.st.Subtle.Render(textfmt.Fit("  RULE  STATE  MATCHED  ACTED  TEXT", d.w))}
	for i, r := range d.rules {
		state := d.st.Accent.Render("on ")
		if !r.On {
			state = d.st.Subtle.Render("off")
		}
		cursor := "  "
		if i == d.cur {
			cursor = d.st.Accent.Render("› ")
		}
		out = append(out, textfmt.Fit(fmt.Sprintf("%s%-4d  %s    %7d  %5d  %s", cursor, r.N, state, r.Matched, r.Fired, textfmt.Escape(r.Text)), d.w))
	}
	if d.err != nil {
		out = append(out, d.st.Error.Render(textfmt.Fit(textfmt.Escape(d.err.Error()), d.w)))
	}
	out = append(out, "", d.st.Subtle.Render(textfmt.Fit("a rule turned off matches nothing until it is on again; the recording notes each change", d.w)))
	if len(out) > d.h && d.h > 0 {
		top := min(max(d.cur+2-d.h, 0), len(out)-d.h)
		out = out[top : top+d.h]
	}
	return textfmt.Lines(strings.Join(out, "\n"), d.w, d.h)
}
