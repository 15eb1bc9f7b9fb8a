package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// breakpointsDialog lists the session's breakpoints, live: space turns
// the one under the cursor on or off, d deletes it, a adds one (a filter
// query), H goes to the held frames.
type breakpointsDialog struct {
	st     *theme.Styles
	b      *breaksState
	cur    int
	w, h   int
	adding bool
	input  textinput.Model
	err    error
	keys   bpKeys
}

type bpKeys struct {
	list.KeyMap
	Toggle, Delete, Add, Held, Close, Send, Cancel key.Binding
}

func (k bpKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Toggle, k.Delete, k.Add, k.Held, k.Send, k.Cancel, k.Close}
}
func (k bpKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Home, k.End}, {k.Toggle, k.Delete, k.Add}, {k.Held, k.Send, k.Cancel, k.Close}}
}

func newBreakpointsDialog(st *theme.Styles, b *breaksState) *breakpointsDialog {
	kb := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	d := &breakpointsDialog{st: st, b: b, input: textinput.New(), keys: bpKeys{
		KeyMap: list.DefaultKeyMap(),
		Toggle: kb("on/off", "space"),
		Delete: kb("delete", "d", "x"),
		Add:    kb("add", "a"),
		Held:   kb("held frames", "H"),
		Close:  kb("close", "esc", "B"),
		Send:   kb("add it", "enter"),
		Cancel: kb("back", "esc"),
	}}
	d.input.Placeholder = "dir:in tool:search"
	d.input.CharLimit = hold.MaxExprBytes
	d.sync()
	return d
}

func (d *breakpointsDialog) Title() string {
	return fmt.Sprintf("breakpoints · %d · a frame one matches is held", len(d.b.st.Breakpoints))
}
func (d *breakpointsDialog) Keys() help.KeyMap { return d.keys }
func (d *breakpointsDialog) Capturing() bool   { return d.adding }
func (d *breakpointsDialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.input.SetWidth(max(w-2, 10))
}

func (d *breakpointsDialog) sync() {
	k := &d.keys
	k.KeyMap.SetEnabled(!d.adding)
	for _, b := range []*key.Binding{&k.Toggle, &k.Delete, &k.Add, &k.Held, &k.Close} {
		b.SetEnabled(!d.adding)
	}
	k.Send.SetEnabled(d.adding)
	k.Cancel.SetEnabled(d.adding)
}

func (d *breakpointsDialog) follow(b *breaksState) {
	d.cur = list.Clamp(d.cur, len(b.st.Breakpoints))
}

// heldOpenMsg asks the root to show the Held dialog.
type heldOpenMsg struct{}

func (d *breakpointsDialog) Update(msg tea.Msg) (answer.Action, tea.Cmd) {
	defer d.sync()
	k, isKey := msg.(tea.KeyPressMsg)
	if d.adding {
		switch {
		case isKey && key.Matches(k, d.keys.Cancel):
			d.adding, d.err = false, nil
			return answer.None, nil
		case isKey && key.Matches(k, d.keys.Send):
			expr := strings.TrimSpace(d.input.Value())
			d.adding, d.err = false, nil
			return answer.None, breaksCmd(d.b.src, hold.MethodAdd, map[string]string{"expr": expr}, "breakpoint set: "+expr, "")
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(msg)
		return answer.None, cmd
	}
	if !isKey {
		return answer.None, nil
	}
	switch {
	case key.Matches(k, d.keys.Close):
		return answer.Later, nil
	case key.Matches(k, d.keys.Held):
		return answer.None, func() tea.Msg { return heldOpenMsg{} }
	case key.Matches(k, d.keys.Add):
		d.adding, d.err = true, nil
		d.input.SetValue("")
		return answer.None, d.input.Focus()
	}
	if n, ok := d.keys.Delta(k, max(d.h-3, 1)); ok {
		d.cur = list.Clamp(d.cur+n, len(d.b.st.Breakpoints))
		return answer.None, nil
	}
	if d.cur >= len(d.b.st.Breakpoints) {
		return answer.None, nil
	}
	bp := d.b.st.Breakpoints[d.cur]
	switch {
	case key.Matches(k, d.keys.Toggle):
		word := "on"
		if bp.Enabled {
			word = "off"
		}
		return answer.None, breaksCmd(d.b.src, hold.MethodEnable, map[string]any{"n": bp.N, "enabled": !bp.Enabled}, fmt.Sprintf("breakpoint %d %s", bp.N, word), "")
	case key.Matches(k, d.keys.Delete):
		return answer.None, breaksCmd(d.b.src, hold.MethodRemove, map[string]int{"n": bp.N}, fmt.Sprintf("breakpoint %d deleted (what it holds stays held)", bp.N), "")
	}
	return answer.None, nil
}

func (d *breakpointsDialog) View() string {
	out := []string{d.st.Subtle.Render(textfmt.Fit("  N    STATE  HITS  QUERY", d.w))}
	bps := d.b.st.Breakpoints
	if len(bps) == 0 {
		out = append(out, d.st.Subtle.Render(textfmt.Fit("  none: a adds one, b on a frame or a Pending row sets one from it", d.w)))
	}
	for i, bp := range bps {
		cursor := "  "
		if i == d.cur {
			cursor = d.st.Accent.Render("› ")
		}
		state := d.st.Accent.Render("on ")
		if !bp.Enabled {
			state = d.st.Subtle.Render("off")
		}
		out = append(out, textfmt.Fit(fmt.Sprintf("%s%-3d  %s    %4d  %s", cursor, bp.N, state, bp.Hits, textfmt.Escape(bp.Expr)), d.w))
	}
	if d.adding {
		out = append(out, "", d.input.View())
	}
	if d.err != nil {
		out = append(out, d.st.Error.Render(textfmt.Fit(textfmt.Escape(d.err.Error()), d.w)))
	}
	timeout := "frames are held until told"
	if d.b.st.TimeoutMS > 0 {
		timeout = fmt.Sprintf("a held frame goes on unchanged after %ds (--break-timeout)", d.b.st.TimeoutMS/1000)
	}
	out = append(out, "", d.st.Subtle.Render(textfmt.Fit("queries as in / (docs/filter.md); "+timeout, d.w)))
	if len(out) > d.h && d.h > 0 {
		top := min(max(d.cur+2-d.h, 0), len(out)-d.h)
		out = out[top : top+d.h]
	}
	return textfmt.Lines(strings.Join(out, "\n"), d.w, d.h)
}
