package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Issue is one validation problem; Field is the top-level property it is
// about, or "" for the arguments as a whole.
type Issue struct {
	Field string
	Msg   string
}

// checkValue checks one present value against the simple keywords of its
// property (type, enum, whole integers); "" means fine.
func checkValue(p Prop, raw json.RawMessage) string {
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if sameJSON(e, raw) {
				return ""
			}
		}
		labels := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			labels[i] = Label(e)
		}
		return "must be one of " + strings.Join(labels, ", ")
	}
	switch p.Type {
	case "string":
		if len(raw) == 0 || raw[0] != '"' {
			return "must be a string"
		}
	case "number":
		if !isNumber(string(raw)) {
			return "must be a number"
		}
	case "integer":
		if !isNumber(string(raw)) {
			return "must be an integer"
		}
		if _, ok := wholeNumber(string(raw)); !ok {
			return "must be a whole number"
		}
	case "boolean":
		if s := string(raw); s != "true" && s != "false" {
			return "must be true or false"
		}
	}
	return ""
}

// checkObject checks required properties and every present value with
// checkValue.
func checkObject(props []Prop, obj map[string]json.RawMessage) []Issue {
	var out []Issue
	for _, p := range props {
		v, ok := obj[p.Name]
		switch {
		case !ok && p.Required:
			out = append(out, Issue{Field: p.Name, Msg: "required"})
		case ok:
			if msg := checkValue(p, v); msg != "" {
				out = append(out, Issue{Field: p.Name, Msg: msg})
			}
		}
	}
	return out
}

// isNumber reports whether s is a JSON number literal.
func isNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	return json.Valid([]byte(s))
}

// wholeNumber returns the integer text of a JSON number literal that is
// whole ("1e3" and "1.0" are whole: 1000 and 1).
func wholeNumber(s string) (string, bool) {
	f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return "", false
	}
	return f.Text('f', 0), true
}

func sameJSON(a, b json.RawMessage) bool {
	a, b = compact(a), compact(b)
	if bytes.Equal(a, b) {
		return true
	}
	if isNumber(string(a)) && isNumber(string(b)) {
		x, _, err1 := big.ParseFloat(string(a), 10, 512, big.ToNearestEven)
		y, _, err2 := big.ParseFloat(string(b), 10, 512, big.ToNearestEven)
		return err1 == nil && err2 == nil && x.Cmp(y) == 0
	}
	return false
}

// schemaURL names the tool's schema inside the compiler; nothing is loaded
// from it.
const schemaURL = "mem://sonde/input-schema.json"

type noLoader struct{}

// Load refuses every URL: a tool's schema is checked on its own, and Update
// never does I/O.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("sonde does not load %s", url)
}

// compile compiles a tool's input schema (draft 2020-12 unless it says
// otherwise), without loading anything.
func compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// schemaIssues validates args with sch and flattens the errors.
func schemaIssues(sch *jsonschema.Schema, args []byte) []Issue {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return []Issue{{Msg: err.Error()}}
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []Issue{{Msg: err.Error()}}
	}
	var out []Issue
	seen := map[Issue]bool{}
	add := func(is Issue) {
		if !seen[is] {
			seen[is] = true
			out = append(out, is)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if req, ok := e.ErrorKind.(*kind.Required); ok && len(e.InstanceLocation) == 0 {
			for _, name := range req.Missing {
				add(Issue{Field: name, Msg: "required"})
			}
			return
		}
		msg := e.Error()
		if rest, ok := strings.CutPrefix(msg, "at '"); ok {
			if _, m, found := strings.Cut(rest, "': "); found {
				msg = m
			}
		}
		is := Issue{Msg: msg}
		if loc := e.InstanceLocation; len(loc) > 0 {
			is.Field = loc[0]
			if len(loc) > 1 {
				is.Msg = "/" + strings.Join(loc[1:], "/") + ": " + msg
			}
		}
		add(is)
	}
	walk(ve)
	return out
}
