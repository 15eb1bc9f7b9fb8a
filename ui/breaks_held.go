package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// heldStep is what the Held dialog is doing.
type heldStep uint8

const (
	heldList   heldStep = iota // the held frames
	heldEdit                   // the frame under the cursor in the JSON editor
	heldAnswer                 // typing the answer to a held request
)

// heldDialog lists the frames held by breakpoints, each with its handle,
// direction, method or tool, id and countdown; each can be forwarded,
// edited (in the dialog's JSON editor, or $EDITOR), dropped or answered,
// in any order.
type heldDialog struct {
	st     *theme.Styles
	b      *breaksState
	cur    int
	w, h   int
	step   heldStep
	handle string // the frame being edited or answered
	editor textarea.Model
	input  textinput.Model
	err    error // the last refusal, shown until the next action
	keys   heldKeys
}

type heldKeys struct {
	list.KeyMap
	Edit, Editor, Forward, Drop, Answer, Breakpoints, Close key.Binding
	Send, Cancel                                            key.Binding
}

func (k heldKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Edit, k.Editor, k.Forward, k.Drop, k.Answer, k.Breakpoints, k.Send, k.Cancel, k.Close}
}
func (k heldKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Home, k.End}, {k.Edit, k.Editor, k.Forward, k.Drop, k.Answer}, {k.Breakpoints, k.Send, k.Cancel, k.Close}}
}

func newHeldDialog(st *theme.Styles, b *breaksState) *heldDialog {
	kb := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	d := &heldDialog{st: st, b: b, editor: textarea.New(), input: textinput.New(), keys: heldKeys{
		KeyMap:      list.DefaultKeyMap(),
		Edit:        kb("edit frame", "enter"),
		Editor:      kb("edit in $EDITOR", "e"),
		Forward:     kb("forward", "f"),
		Drop:        kb("drop", "d", "x"),
		Answer:      kb("answer request", "a"),
		Breakpoints: kb("breakpoints", "B"),
		Close:       kb("close (frames stay held)", "esc", "H"),
		Send:        kb("send", "ctrl+s"),
		Cancel:      kb("back", "esc"),
	}}
	d.keys.Send.SetHelp("ctrl+s", "send")
	d.editor.ShowLineNumbers = false
	d.editor.MaxHeight = 0
	d.editor.CharLimit = 0
	d.input.Placeholder = `{"content":[]}  or  -32000:message`
	d.input.CharLimit = 0
	d.sync()
	return d
}

func (d *heldDialog) Title() string {
	switch d.step {
	case heldEdit:
		return "edit " + d.handle + " · ctrl+s forwards it edited"
	case heldAnswer:
		return "answer " + d.handle + " · a result (JSON) or CODE:MESSAGE"
	}
	return fmt.Sprintf("held frames · %d", len(d.b.st.Held))
}
func (d *heldDialog) Keys() help.KeyMap { return d.keys }
func (d *heldDialog) Capturing() bool   { return d.step != heldList }
func (d *heldDialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.editor.SetWidth(max(w, 10))
	d.editor.SetHeight(max(h-3, 3))
	d.input.SetWidth(max(w-2, 10))
}

// sync enables the keys of the current step.
func (d *heldDialog) sync() {
	k := &d.keys
	inList := d.step == heldList
	k.KeyMap.SetEnabled(inList)
	for _, b := range []*key.Binding{&k.Edit, &k.Editor, &k.Forward, &k.Drop, &k.Answer, &k.Breakpoints, &k.Close} {
		b.SetEnabled(inList)
	}
	k.Send.SetEnabled(!inList)
	k.Cancel.SetEnabled(!inList)
	if d.step == heldAnswer {
		k.Send.SetKeys("enter", "ctrl+s")
		k.Send.SetHelp("enter", "send answer")
	} else {
		k.Send.SetKeys("ctrl+s")
		k.Send.SetHelp("ctrl+s", "forward edited")
	}
}

// follow brings the dialog up to the state listed: the frame being edited
// that was let go (by the timeout, elsewhere) ends its editor.
func (d *heldDialog) follow(b *breaksState) {
	d.cur = list.Clamp(d.cur, len(b.st.Held))
	if d.step != heldList && d.held(d.handle) == nil {
		d.step, d.err = heldList, fmt.Errorf("%s was let go meanwhile", d.handle)
		d.sync()
	}
}

// refused shows why an action on handle was refused; the frame stays held
// (and its editor open).
func (d *heldDialog) refused(handle string, err error) { d.err = err }

func (d *heldDialog) held(handle string) *hold.Held {
	for i := range d.b.st.Held {
		if d.b.st.Held[i].Handle == handle {
			return &d.b.st.Held[i]
		}
	}
	return nil
}

func (d *heldDialog) selected() *hold.Held {
	if d.cur < len(d.b.st.Held) {
		return &d.b.st.Held[d.cur]
	}
	return nil
}

// editorDoneMsg carries what $EDITOR left in the temp file.
type editorDoneMsg struct {
	handle string
	text   string
	err    error
}

// breakpointsOpenMsg asks the root to show the Breakpoints dialog.
type breakpointsOpenMsg struct{}

func (d *heldDialog) Update(msg tea.Msg) (answer.Action, tea.Cmd) {
	defer d.sync()
	if m, ok := msg.(editorDoneMsg); ok {
		if m.err != nil {
			d.err = m.err
			return answer.None, nil
		}
		if d.held(m.handle) != nil {
			d.openEditor(m.handle, m.text)
		}
		return answer.None, nil
	}
	switch d.step {
	case heldEdit:
		return d.updateEdit(msg)
	case heldAnswer:
		return d.updateAnswer(msg)
	}
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return answer.None, nil
	}
	return d.listKey(k)
}

func (d *heldDialog) listKey(k tea.KeyPressMsg) (answer.Action, tea.Cmd) {
	if key.Matches(k, d.keys.Close) {
		return answer.Later, nil
	}
	if key.Matches(k, d.keys.Breakpoints) {
		return answer.None, func() tea.Msg { return breakpointsOpenMsg{} }
	}
	if n, ok := d.keys.Delta(k, max(d.h-3, 1)); ok {
		d.cur = list.Clamp(d.cur+n, len(d.b.st.Held))
		return answer.None, nil
	}
	h := d.selected()
	if h == nil {
		return answer.None, nil
	}
	d.err = nil
	src := d.b.src
	switch {
	case key.Matches(k, d.keys.Forward):
		return answer.None, breaksCmd(src, hold.MethodRelease, map[string][]string{"handles": {h.Handle}}, h.Handle+" forwarded", h.Handle)
	case key.Matches(k, d.keys.Drop):
		return answer.None, breaksCmd(src, hold.MethodDrop, handleParams{Handle: h.Handle}, h.Handle+" dropped", h.Handle)
	case key.Matches(k, d.keys.Edit):
		d.openEditor(h.Handle, pretty(h.Frame))
		return answer.None, d.editor.Focus()
	case key.Matches(k, d.keys.Editor):
		return answer.None, externalEditor(h.Handle, pretty(h.Frame))
	case key.Matches(k, d.keys.Answer):
		if h.Kind != jsonrpc.KindRequest.String() || h.ID == "" {
			d.err = fmt.Errorf("%s is a %s: only a request can be answered (forward, edit or drop it)", h.Handle, h.Kind)
			return answer.None, nil
		}
		d.step, d.handle = heldAnswer, h.Handle
		d.input.SetValue("")
		return answer.None, d.input.Focus()
	}
	return answer.None, nil
}

func (d *heldDialog) openEditor(handle, text string) {
	d.step, d.handle, d.err = heldEdit, handle, nil
	d.editor.SetValue(text)
	d.editor.MoveToBegin()
	d.editor.Focus()
}

func (d *heldDialog) updateEdit(msg tea.Msg) (answer.Action, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			d.step, d.err = heldList, nil
			d.editor.Blur()
			return answer.None, nil
		case key.Matches(k, d.keys.Send):
			return answer.None, d.sendEdit()
		}
	}
	var cmd tea.Cmd
	d.editor, cmd = d.editor.Update(msg)
	return answer.None, cmd
}

// sendEdit checks the edit here first (JSON, with the byte offset of a
// mistake), then hands it to the session, which checks the rest; either
// refusal keeps the frame held and the editor open.
func (d *heldDialog) sendEdit() tea.Cmd {
	text := d.editor.Value()
	var v json.RawMessage
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		d.err = jsonError("the edit", text, err)
		return nil
	}
	d.err = nil
	handle := d.handle
	d.step = heldList
	return breaksCmd(d.b.src, hold.MethodEdit, map[string]any{"handle": handle, "frame": v}, handle+" forwarded edited", handle)
}

// jsonError says where text is not JSON: the byte offset, and the line
// and column.
func jsonError(what, text string, err error) error {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		line := 1 + strings.Count(text[:min(int(se.Offset), len(text))], "\n")
		return fmt.Errorf("refused at byte %d (line %d): %s is not JSON: %v; the frame stays held", se.Offset, line, what, se)
	}
	return fmt.Errorf("%s is not JSON: %v; the frame stays held", what, err)
}

func asSyntax(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	*se = s
	return ok
}

var errorAnswer = regexp.MustCompile(`^\s*(-?\d+)\s*:(.*)$`)

func (d *heldDialog) updateAnswer(msg tea.Msg) (answer.Action, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(k, d.keys.Cancel):
			d.step, d.err = heldList, nil
			return answer.None, nil
		case key.Matches(k, d.keys.Send):
			return answer.None, d.sendAnswer()
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return answer.None, cmd
}

// sendAnswer answers the held request: CODE:MESSAGE is an error, anything
// else a JSON result.
func (d *heldDialog) sendAnswer() tea.Cmd {
	text := strings.TrimSpace(d.input.Value())
	p := answerParams{Handle: d.handle}
	if m := errorAnswer.FindStringSubmatch(text); m != nil {
		code, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			d.err = fmt.Errorf("error code %s: %v", m[1], err)
			return nil
		}
		p.Error = &jsonrpc.Error{Code: code, Message: strings.TrimSpace(m[2])}
	} else {
		if !json.Valid([]byte(text)) {
			var v any
			d.err = jsonError("the answer's result", text, json.Unmarshal([]byte(text), &v))
			return nil
		}
		p.Result = json.RawMessage(text)
	}
	d.err = nil
	d.step = heldList
	return breaksCmd(d.b.src, hold.MethodAnswer, p, d.handle+" answered", d.handle)
}

// pretty indents a frame for the editor.
func pretty(raw []byte) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}

// externalEditor writes the frame to a temp file, runs $EDITOR on it (the
// UI gives it the terminal) and brings back what it left, into the
// dialog's editor (ctrl+s there forwards it).
func externalEditor(handle, text string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", "sonde-"+handle+"-*.json")
		if err != nil {
			return editorDoneMsg{handle: handle, err: err}
		}
		path := f.Name()
		_, err = f.WriteString(text + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(path)
			return editorDoneMsg{handle: handle, err: err}
		}
		editor := os.Getenv("VISUAL")
		if editor == "" {
			editor = os.Getenv("EDITOR")
		}
		if editor == "" {
			editor = "vi"
		}
		argv := append(strings.Fields(editor), path)
		cmd := exec.Command(argv[0], argv[1:]...)
		return tea.ExecProcess(cmd, func(err error) tea.Msg {
			defer os.Remove(path)
			if err != nil {
				return editorDoneMsg{handle: handle, err: fmt.Errorf("$EDITOR (%s): %w", editor, err)}
			}
			b, rerr := os.ReadFile(path)
			return editorDoneMsg{handle: handle, text: strings.TrimSpace(string(b)), err: rerr}
		})()
	}
}

func (d *heldDialog) View() string {
	var out []string
	switch d.step {
	case heldEdit:
		d.editor.SetHeight(max(d.h-d.errLines(), 3))
		out = append(out, d.editor.View())
	case heldAnswer:
		out = append(out, d.st.Subtle.Render(textfmt.Fit("the sender gets this answer with the request's id; the receiver never sees the request", d.w)), "", d.input.View())
	default:
		out = d.listView()
	}
	if d.err != nil {
		msg := lipgloss.NewStyle().Width(max(d.w, 1)).Render(textfmt.Clean(d.err.Error()))
		out = append(out, d.st.Error.Render(msg))
	}
	return textfmt.Lines(strings.Join(out, "\n"), d.w, d.h)
}

func (d *heldDialog) listView() []string {
	held := d.b.st.Held
	out := []string{d.st.Subtle.Render(textfmt.Fit("  HANDLE  DIR  KIND          ID      LEFT  METHOD / TOOL", d.w))}
	if len(held) == 0 {
		out = append(out, d.st.Subtle.Render(textfmt.Fit("  nothing is held: a breakpoint (B) holds the frames it matches", d.w)))
	}
	top := 0
	rows := max(d.h-4, 1)
	if d.cur >= rows {
		top = d.cur - rows + 1
	}
	for i := top; i < len(held) && i < top+rows; i++ {
		h := held[i]
		cursor := "  "
		if i == d.cur {
			cursor = d.st.Accent.Render("› ")
		}
		what := h.Method
		if h.Tool != "" {
			what += " " + h.Tool
		}
		dir := "<-"
		if h.Direction == "out" {
			dir = "->"
		}
		line := fmt.Sprintf("%s%-6s  %-3s  %-12s  %-6s  %4s  %s", cursor, h.Handle, dir, h.Kind, textfmt.Escape(h.ID), d.b.left(h, d.b.now()), textfmt.Escape(what))
		out = append(out, textfmt.Fit(line, d.w))
	}
	out = append(out, "", d.st.Subtle.Render(textfmt.Fit("let them go in any order: f forwards the one under the cursor", d.w)))
	return out
}

// errLines is how many lines the refusal takes below the editor.
func (d *heldDialog) errLines() int {
	if d.err == nil {
		return 0
	}
	return lipgloss.Height(lipgloss.NewStyle().Width(max(d.w, 1)).Render(textfmt.Clean(d.err.Error())))
}
