package form

import "encoding/json"

// toJSON switches to the raw editor, pre-filled with the arguments the
// fields hold so far (text that does not parse yet is left out).
func (f *Form) toJSON() {
	args, _, _ := f.object(false)
	f.editor.SetValue(pretty(f.withSkeletons(args)))
	if f.focus < len(f.fields) {
		f.fields[f.focus].blur()
	}
	f.mode, f.issues = ModeJSON, nil
	f.editor.Focus()
}

// toFields switches back to the fields when the editor holds an object.
func (f *Form) toFields() {
	args, _, err := parseArgs(f.editor.Value())
	if err != nil {
		f.issues = []Issue{{Msg: err.Error() + " (fix it to go back to the fields)"}}
		return
	}
	names, vals, _ := orderedObject(args)
	f.setObject(names, vals)
	f.editor.Blur()
	f.mode, f.issues = ModeFields, nil
	if f.focus < len(f.fields) {
		f.fields[f.focus].focus()
	}
}

// setObject fills the fields from an arguments object; keys that are not
// properties are kept as extras.
func (f *Form) setObject(names []string, vals []json.RawMessage) {
	byName := make(map[string]json.RawMessage, len(names))
	for i, n := range names {
		byName[n] = vals[i]
	}
	known := make(map[string]bool, len(f.fields))
	for i := range f.fields {
		known[f.fields[i].prop.Name] = true
		f.fields[i].set(byName[f.fields[i].prop.Name])
	}
	f.extraNames, f.extraVals = nil, nil
	for i, n := range names {
		if !known[n] {
			f.extraNames = append(f.extraNames, n)
			f.extraVals = append(f.extraVals, vals[i])
		}
	}
}
