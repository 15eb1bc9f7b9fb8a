package form

// FocusedText returns the name and text of the focused field when it is a
// text field of the fields mode (what completion can help with).
func (f *Form) FocusedText() (name, text string, ok bool) {
	if f.mode != ModeFields || f.focus >= len(f.fields) || f.fields[f.focus].kind != kindText {
		return "", "", false
	}
	fl := &f.fields[f.focus]
	return fl.prop.Name, fl.input.Value(), true
}

// Texts returns the text of every text field that is not empty, by name.
func (f *Form) Texts() map[string]string {
	out := map[string]string{}
	for i := range f.fields {
		if fl := &f.fields[i]; fl.kind == kindText && fl.input.Value() != "" {
			out[fl.prop.Name] = fl.input.Value()
		}
	}
	return out
}

// SetText replaces the text of the text field name, cursor at the end.
func (f *Form) SetText(name, text string) {
	for i := range f.fields {
		if fl := &f.fields[i]; fl.kind == kindText && fl.prop.Name == name {
			fl.err = ""
			fl.input.SetValue(text)
			fl.input.CursorEnd()
		}
	}
}
