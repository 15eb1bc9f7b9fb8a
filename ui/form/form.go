// Package form is the argument form of the Tools pane: one field per
// top-level property of a tool's inputSchema (text, number, integer, boolean
// toggle, enum choice, JSON value), or a raw JSON editor for anything the
// fields cannot express. It validates the arguments before they are sent:
// required properties, numbers, whole integers and enums field by field, and
// then the whole object against the inputSchema, compiled once when the form
// opens.
package form

import (
	"encoding/json"
	"errors"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Mode says how the arguments are edited.
type Mode uint8

// The two editing modes.
const (
	// ModeFields edits one field per property.
	ModeFields Mode = iota
	// ModeJSON edits the arguments object as raw JSON.
	ModeJSON
)

// Action is what an Update asks the owner of the form to do.
type Action uint8

// The actions.
const (
	// None: keep the form open.
	None Action = iota
	// Submit: the arguments are valid; read them with Args and close the form.
	Submit
	// Cancel: close the form without sending.
	Cancel
)

// Form edits and validates the arguments of one tool call.
type Form struct {
	st       *theme.Styles
	keys     KeyMap
	tool     mcp.Tool
	schema   Schema
	compiled *jsonschema.Schema
	warnings []string
	fields   []field
	// extra holds keys of the arguments that are not schema properties (from
	// the JSON editor or a previous call), sent along with the fields.
	extraNames []string
	extraVals  []json.RawMessage
	focus      int
	top        int // first field shown
	mode       Mode
	editor     textarea.Model
	issues     []Issue // problems not shown next to a field
	args       json.RawMessage
	w, h       int
	verb       string // the heading's first word ("call")
}

// New builds the form for tool, pre-filled with prefill (the arguments of a
// previous call) when that is a JSON object, else with the schema defaults.
// The schema is compiled here, once; a schema that does not compile becomes
// a warning and validation falls back to the field checks.
func New(st *theme.Styles, keys KeyMap, tool mcp.Tool, prefill json.RawMessage) *Form {
	f := &Form{st: st, keys: keys, tool: tool, schema: Parse(tool.InputSchema)}
	if errors.Is(f.schema.Err, ErrNoSchema) {
		f.warnings = append(f.warnings, "no inputSchema: arguments are not checked")
	} else {
		if f.schema.Err != nil {
			f.warnings = append(f.warnings, f.schema.Err.Error()+": JSON editor only")
		}
		var err error
		if f.compiled, err = compile(tool.InputSchema); err != nil {
			f.warnings = append(f.warnings, "inputSchema does not compile, checking fields only: "+oneLine(err.Error()))
		}
	}
	for _, p := range f.schema.Props {
		f.fields = append(f.fields, newField(st, p))
	}
	f.editor = newEditor(st)
	if names, vals, err := orderedObject(prefill); err == nil && prefill != nil {
		f.setObject(names, vals)
	}
	if f.schema.Err != nil || !f.schema.Simple {
		f.toJSON()
	} else if len(f.fields) > 0 {
		f.fields[0].focus()
	}
	return f
}

func newEditor(st *theme.Styles) textarea.Model {
	ed := textarea.New()
	s := textarea.DefaultStyles(true)
	state := textarea.StyleState{
		Base: st.Text, Text: st.Text, LineNumber: st.Subtle, CursorLineNumber: st.Accent,
		CursorLine: st.Text, EndOfBuffer: st.Subtle, Placeholder: st.Subtle, Prompt: st.Subtle,
		Selection: st.Selected,
	}
	s.Focused, s.Blurred = state, state
	s.Cursor.Color = st.Palette.Accent
	s.Cursor.Blink = false
	ed.SetStyles(s)
	ed.Placeholder = "{}"
	ed.MaxHeight = 0
	return ed
}

// SetVerb replaces "call" in the form's heading (an elicitation form is
// "answer", not a call).
func (f *Form) SetVerb(v string) { f.verb = v }

// Tool returns the name of the tool the form calls.
func (f *Form) Tool() string { return f.tool.Name }

// Mode returns the editing mode.
func (f *Form) Mode() Mode { return f.mode }

// Args returns the validated arguments after Update returned Submit.
func (f *Form) Args() json.RawMessage { return f.args }

// Warnings returns the schema warnings shown at the top of the form.
func (f *Form) Warnings() []string { return f.warnings }

// Issues returns every problem shown: field errors first, then the others.
func (f *Form) Issues() []Issue {
	var out []Issue
	for _, fl := range f.fields {
		if fl.err != "" {
			out = append(out, Issue{Field: fl.prop.Name, Msg: fl.err})
		}
	}
	return append(out, f.issues...)
}

// Keys returns the form's bindings, with those that do not apply to the
// mode or to the focused field disabled.
func (f *Form) Keys() KeyMap {
	k := f.keys
	k.SetEnabled(true)
	fields := f.mode == ModeFields
	var cur *field
	if fields && f.focus < len(f.fields) {
		cur = &f.fields[f.focus]
	}
	k.Next.SetEnabled(fields && len(f.fields) > 1)
	k.Prev.SetEnabled(fields && len(f.fields) > 1)
	k.Enter.SetEnabled(fields)
	k.Toggle.SetEnabled(cur != nil && cur.isBool())
	k.CycleNext.SetEnabled(cur != nil && cur.kind == kindChoice)
	k.CyclePrev.SetEnabled(cur != nil && cur.kind == kindChoice)
	k.RawJSON.SetEnabled(f.schema.Err == nil)
	return k
}

// SetSize sets the size the form draws in.
func (f *Form) SetSize(w, h int) {
	f.w, f.h = w, h
	f.layout()
}

// Update handles a key, paste or mouse message.
func (f *Form) Update(msg tea.Msg) (Action, tea.Cmd) {
	defer f.layout()
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return f.key(msg)
	case tea.PasteMsg:
		return None, f.forward(msg)
	case tea.MouseWheelMsg:
		if f.mode == ModeFields {
			if msg.Button == tea.MouseWheelDown {
				f.move(1)
			} else if msg.Button == tea.MouseWheelUp {
				f.move(-1)
			}
		}
	case tea.MouseClickMsg:
		f.click(msg.Y)
	}
	return None, nil
}

func (f *Form) key(msg tea.KeyPressMsg) (Action, tea.Cmd) {
	k := f.Keys()
	switch {
	case key.Matches(msg, k.Cancel):
		return Cancel, nil
	case key.Matches(msg, k.Submit):
		return f.submit(), nil
	case key.Matches(msg, k.RawJSON):
		if f.mode == ModeFields {
			f.toJSON()
		} else {
			f.toFields()
		}
		return None, nil
	case key.Matches(msg, k.Enter):
		if f.focus >= len(f.fields)-1 {
			return f.submit(), nil
		}
		f.move(1)
	case key.Matches(msg, k.Next):
		f.move(1)
	case key.Matches(msg, k.Prev):
		f.move(-1)
	case key.Matches(msg, k.Toggle), key.Matches(msg, k.CycleNext):
		f.fields[f.focus].cycle(1)
	case key.Matches(msg, k.CyclePrev):
		f.fields[f.focus].cycle(-1)
	default:
		return None, f.forward(msg)
	}
	return None, nil
}

// forward passes a message to the JSON editor or the focused text input.
func (f *Form) forward(msg tea.Msg) tea.Cmd {
	if f.mode == ModeJSON {
		var cmd tea.Cmd
		f.editor, cmd = f.editor.Update(msg)
		return cmd
	}
	if f.focus < len(f.fields) {
		return f.fields[f.focus].update(msg)
	}
	return nil
}

func (f *Form) move(d int) {
	n := len(f.fields)
	if n == 0 {
		return
	}
	f.fields[f.focus].blur()
	f.focus = ((f.focus+d)%n + n) % n
	f.fields[f.focus].focus()
}

func (f *Form) click(y int) {
	if f.mode != ModeFields {
		return
	}
	row := y - f.headerLines()
	if row < 0 {
		return
	}
	if i := f.top + row/2; i < len(f.fields) && i != f.focus {
		f.move(i - f.focus)
	}
}
