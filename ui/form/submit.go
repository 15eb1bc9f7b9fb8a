package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// object builds the arguments from the fields and the extras, in schema
// order. With strict, a field whose text does not parse is marked and ok is
// false; otherwise such fields are left out.
func (f *Form) object(strict bool) (args json.RawMessage, obj map[string]json.RawMessage, ok bool) {
	ok = true
	obj = make(map[string]json.RawMessage, len(f.fields)+len(f.extraNames))
	var names []string
	var vals []json.RawMessage
	for i := range f.fields {
		fl := &f.fields[i]
		v, present, msg := fl.value()
		if strict {
			fl.err = msg
		}
		if msg != "" {
			ok = false
			continue
		}
		if present {
			names, vals = append(names, fl.prop.Name), append(vals, v)
			obj[fl.prop.Name] = v
		}
	}
	for i, n := range f.extraNames {
		if _, dup := obj[n]; !dup {
			names, vals = append(names, n), append(vals, f.extraVals[i])
			obj[n] = f.extraVals[i]
		}
	}
	return encodeObject(names, vals), obj, ok
}

func encodeObject(names []string, vals []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(n)
		b.Write(k)
		b.WriteByte(':')
		b.Write(vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// submit validates the arguments and returns Submit when they may be sent.
func (f *Form) submit() Action {
	f.issues = nil
	var args json.RawMessage
	var obj map[string]json.RawMessage
	if f.mode == ModeJSON {
		var err error
		if args, obj, err = parseArgs(f.editor.Value()); err != nil {
			f.issues = []Issue{{Msg: err.Error()}}
			return None
		}
	}
	ok := true
	if f.mode == ModeFields {
		args, obj, ok = f.object(true)
	}
	issues := checkObject(f.schema.Props, obj)
	// When some text does not parse, the fields already say so and the
	// schema would only repeat it.
	if ok && f.compiled != nil {
		issues = append(issues, schemaIssues(f.compiled, args)...)
	}
	if len(issues) > 0 || !ok {
		f.report(issues)
		return None
	}
	f.args = args
	return Submit
}

// report shows issues next to their fields (fields mode) or as a list.
func (f *Form) report(issues []Issue) {
	seen := map[Issue]bool{}
	for _, is := range issues {
		if seen[is] {
			continue
		}
		seen[is] = true
		if f.mode == ModeFields && is.Field != "" {
			if i := f.fieldIndex(is.Field); i >= 0 {
				if f.fields[i].err == "" {
					f.fields[i].err = is.Msg
				}
				continue
			}
		}
		f.issues = append(f.issues, is)
	}
	f.focusFirstError()
}

func (f *Form) fieldIndex(name string) int {
	for i := range f.fields {
		if f.fields[i].prop.Name == name {
			return i
		}
	}
	return -1
}

func (f *Form) focusFirstError() {
	if f.mode != ModeFields {
		return
	}
	for i := range f.fields {
		if f.fields[i].err != "" {
			f.move(i - f.focus)
			return
		}
	}
}

// parseArgs reads the JSON editor: empty means {}; anything else must be a
// JSON object.
func parseArgs(text string) (json.RawMessage, map[string]json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		text = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(text, int(se.Offset)-1)
			return nil, nil, fmt.Errorf("line %d col %d: %s", line, col, se.Error())
		}
		return nil, nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, errors.New("arguments must be a JSON object")
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal([]byte(text), &obj)
	return compact(json.RawMessage(text)), obj, nil
}

// position turns the byte index of a character into a 1-based line and
// column (in bytes).
func position(text string, i int) (int, int) {
	i = min(max(i, 0), len(text))
	before := text[:i]
	return strings.Count(before, "\n") + 1, i - strings.LastIndexByte(before, '\n')
}

func pretty(args json.RawMessage) string {
	if len(args) <= 2 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Indent(&b, args, "", "  ") != nil {
		return string(args)
	}
	return b.String()
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
