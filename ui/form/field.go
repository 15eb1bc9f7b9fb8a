package form

import (
	"encoding/json"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/theme"
)

type fieldKind uint8

const (
	kindText    fieldKind = iota // string: a text input, sent as a JSON string
	kindNumber                   // number: a text input holding a JSON number
	kindInteger                  // integer: a text input holding a whole number
	kindChoice                   // boolean or enum: cycles through choices
	kindJSON                     // anything nested: a text input holding a JSON value
)

// field edits one top-level property.
type field struct {
	prop    Prop
	kind    fieldKind
	input   textinput.Model   // text, number, integer, JSON
	choices []json.RawMessage // choice: the values; nil is "unset"
	choice  int
	err     string
}

func newField(st *theme.Styles, p Prop) field {
	f := field{prop: p}
	switch {
	case p.Nested, len(p.Items) > 0:
		f.kind = kindJSON
	case len(p.Enum) > 0:
		f.kind = kindChoice
		f.choices = append(f.choices, p.Enum...)
	case p.Type == "boolean":
		f.kind = kindChoice
		f.choices = []json.RawMessage{json.RawMessage("false"), json.RawMessage("true")}
	case p.Type == "number":
		f.kind = kindNumber
	case p.Type == "integer":
		f.kind = kindInteger
	default:
		f.kind = kindText
	}
	if f.kind == kindChoice && !p.Required {
		f.choices = append([]json.RawMessage{nil}, f.choices...)
	}
	if f.kind != kindChoice {
		f.input = textinput.New()
		f.input.Prompt = ""
		f.input.Placeholder = p.Type
		if f.kind == kindJSON {
			f.input.Placeholder = p.Type + " as JSON"
		}
		f.input.SetStyles(InputStyles(st))
	}
	f.set(p.Default)
	return f
}

// InputStyles draws text inputs with the theme; the cursor does not blink,
// so no timer messages are needed.
func InputStyles(st *theme.Styles) textinput.Styles {
	s := textinput.DefaultStyles(true)
	state := textinput.StyleState{Text: st.Text, Placeholder: st.Subtle, Suggestion: st.Subtle, Prompt: st.Accent}
	s.Focused, s.Blurred = state, state
	s.Cursor.Color = st.Palette.Accent
	s.Cursor.Blink = false
	return s
}

// set puts a JSON value into the field (nil clears it). A value that is not
// one of the choices leaves a choice field unchanged.
func (f *field) set(raw json.RawMessage) {
	f.err = ""
	if f.kind == kindChoice {
		if raw == nil {
			f.choice = 0
			return
		}
		for i, c := range f.choices {
			if c != nil && sameJSON(c, raw) {
				f.choice = i
				return
			}
		}
		return
	}
	text := ""
	if raw != nil {
		text = string(compact(raw))
		var s string
		if f.kind == kindText && json.Unmarshal(raw, &s) == nil {
			text = s
		}
	}
	f.input.SetValue(text)
	f.input.CursorEnd()
}

// value returns the field's JSON value, whether it is set, and what is wrong
// with the text typed into it.
func (f *field) value() (json.RawMessage, bool, string) {
	if f.kind == kindChoice {
		c := f.choices[f.choice]
		return c, c != nil, ""
	}
	text := f.input.Value()
	if f.kind != kindText {
		text = strings.TrimSpace(text)
	}
	if text == "" {
		return nil, false, ""
	}
	switch f.kind {
	case kindNumber:
		if !isNumber(text) {
			return nil, false, "not a number"
		}
	case kindInteger:
		if !isNumber(text) {
			return nil, false, "not a number"
		}
		whole, ok := wholeNumber(text)
		if !ok {
			return nil, false, "not a whole number"
		}
		text = whole
	case kindJSON:
		if !json.Valid([]byte(text)) {
			return nil, false, "not valid JSON"
		}
		return compact(json.RawMessage(text)), true, ""
	default:
		b, _ := json.Marshal(text)
		return b, true, ""
	}
	return json.RawMessage(text), true, ""
}

// cycle steps a choice field by d, wrapping around.
func (f *field) cycle(d int) {
	if f.kind != kindChoice || len(f.choices) == 0 {
		return
	}
	f.err = ""
	f.choice = ((f.choice+d)%len(f.choices) + len(f.choices)) % len(f.choices)
}

func (f *field) focus() {
	if f.kind != kindChoice {
		f.input.Focus()
	}
}

func (f *field) blur() {
	if f.kind != kindChoice {
		f.input.Blur()
	}
}

// update passes a key or paste to the field's text input.
func (f *field) update(msg tea.Msg) tea.Cmd {
	if f.kind == kindChoice {
		return nil
	}
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	if f.input.Value() != before {
		f.err = ""
	}
	return cmd
}

// isBool reports whether the field is a boolean toggle.
func (f *field) isBool() bool {
	return f.kind == kindChoice && f.prop.Type == "boolean" && len(f.prop.Enum) == 0
}

// unset is 1 when the first choice is "unset", else 0.
func (f *field) unset() int {
	if len(f.choices) > 0 && f.choices[0] == nil {
		return 1
	}
	return 0
}

// choiceLabel is the selected choice as shown: its title when the schema
// gives one, else the value.
func (f *field) choiceLabel() string {
	c := f.choices[f.choice]
	if t := f.prop.EnumTitles; len(t) == len(f.prop.Enum) {
		for i, e := range f.prop.Enum {
			if sameJSON(e, c) {
				return t[i] + " (" + Label(c) + ")"
			}
		}
	}
	return Label(c)
}

// itemsHint lists the values a multi-select array may hold.
func itemsHint(p Prop) string {
	labels := make([]string, len(p.Items))
	for i, v := range p.Items {
		labels[i] = string(v)
	}
	s := "JSON array of " + strings.Join(labels, ", ")
	if p.Description != "" {
		s = p.Description + " · " + s
	}
	return s
}
