package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Prop is one top-level property of a tool's input schema, in the order the
// schema lists it.
type Prop struct {
	Name        string
	Title       string
	Description string
	// Type is the JSON type ("string", "number", "integer", "boolean",
	// "object", "array"), several joined by "|", a combinator name ("oneOf",
	// "anyOf", "allOf", "$ref"), or "any" when the schema says nothing.
	Type string
	// Enum holds the allowed values (from enum, a single const, or a oneOf
	// or anyOf whose every branch is a const).
	Enum []json.RawMessage
	// EnumTitles are the titles of the Enum values, when the schema gives
	// them (oneOf/anyOf branches with title, or enumNames); else nil.
	EnumTitles []string
	// Default is the schema's default value, if any.
	Default  json.RawMessage
	Required bool
	// Nested is true when a simple field cannot edit the property and the
	// raw JSON editor is needed.
	Nested bool
	// Items are the allowed values of the elements of an array property
	// whose items are a choice (a multi-select, edited as a JSON array).
	Items []json.RawMessage
	// Skeleton is what the JSON editor starts a Nested property with when
	// it is required and the schema gives it a shape: an object with its
	// required fields, an array of objects as one such object; nil for
	// any other (an array of strings starts absent, as before).
	Skeleton json.RawMessage
}

// Schema is the part of an input schema the form and the list read.
type Schema struct {
	// Props are the top-level properties, in schema order.
	Props []Prop
	// Simple is true when every property has a field of its own (no nested
	// property, and the schema is an object schema).
	Simple bool
	// Err says why the schema could not be read (missing, not JSON, not an
	// object schema); Props is then empty and only the JSON editor is used.
	Err error
}

// ErrNoSchema is reported for a tool without an inputSchema.
var ErrNoSchema = errors.New("the tool has no inputSchema")

// Parse reads the top-level properties of an input schema.
func Parse(raw json.RawMessage) Schema {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return Schema{Err: ErrNoSchema}
	}
	var top struct {
		Type       json.RawMessage `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return Schema{Err: fmt.Errorf("inputSchema is not a JSON object: %w", err)}
	}
	if t := typeName(top.Type); t != "" && t != "object" {
		return Schema{Err: fmt.Errorf("inputSchema has type %s, not object", t)}
	}
	names, values, err := orderedObject(top.Properties)
	if err != nil {
		return Schema{Err: fmt.Errorf("inputSchema properties: %w", err)}
	}
	req := make(map[string]bool, len(top.Required))
	for _, r := range top.Required {
		req[r] = true
	}
	s := Schema{Simple: true, Props: make([]Prop, 0, len(names))}
	for i, name := range names {
		p := parseProp(name, values[i])
		p.Required = req[name]
		s.Simple = s.Simple && !p.Nested
		s.Props = append(s.Props, p)
	}
	return s
}

func parseProp(name string, raw json.RawMessage) Prop {
	var ps struct {
		Type        json.RawMessage   `json:"type"`
		Title       string            `json:"title"`
		Description string            `json:"description"`
		Enum        []json.RawMessage `json:"enum"`
		Const       json.RawMessage   `json:"const"`
		Default     json.RawMessage   `json:"default"`
		OneOf       json.RawMessage   `json:"oneOf"`
		AnyOf       json.RawMessage   `json:"anyOf"`
		AllOf       json.RawMessage   `json:"allOf"`
		Ref         string            `json:"$ref"`
		EnumNames   []string          `json:"enumNames"`
		Items       json.RawMessage   `json:"items"`
	}
	p := Prop{Name: name}
	if err := json.Unmarshal(raw, &ps); err != nil {
		// true, false or something odd: only the JSON editor can help.
		p.Type, p.Nested = "any", true
		return p
	}
	p.Title, p.Description, p.Default = ps.Title, ps.Description, compact(ps.Default)
	p.Type = typeName(ps.Type)
	for _, e := range ps.Enum {
		p.Enum = append(p.Enum, compact(e))
	}
	if len(ps.Const) > 0 {
		p.Enum = []json.RawMessage{compact(ps.Const)}
	}
	if len(ps.EnumNames) == len(p.Enum) && len(p.Enum) > 0 {
		p.EnumTitles = ps.EnumNames
	}
	// A oneOf or anyOf of titled consts is a choice (elicitation schemas
	// use it for enums with labels).
	for _, branches := range []json.RawMessage{ps.OneOf, ps.AnyOf} {
		if vals, titles, ok := constBranches(branches); ok {
			p.Enum, p.EnumTitles = vals, titles
			ps.OneOf, ps.AnyOf = nil, nil
		}
	}
	// An array of such choices (a multi-select) is edited as a JSON array
	// in a field of its own; the choices are listed under it.
	if typeName(ps.Type) == "array" && len(ps.Items) > 0 {
		if items := parseProp("", ps.Items); len(items.Enum) > 0 && !items.Nested {
			p.Type, p.Items = "array", items.Enum
			return p
		}
	}
	switch {
	case ps.OneOf != nil:
		p.Type, p.Nested = "oneOf", true
	case ps.AnyOf != nil:
		p.Type, p.Nested = "anyOf", true
	case ps.AllOf != nil:
		p.Type, p.Nested = "allOf", true
	case ps.Ref != "":
		p.Type, p.Nested = "$ref", true
	}
	if p.Nested {
		return p
	}
	switch p.Type {
	case "string", "number", "integer", "boolean":
	case "":
		p.Type, p.Nested = "any", len(p.Enum) == 0
		if len(p.Enum) > 0 {
			p.Type = "enum"
		}
	default: // object, array, null, or several types
		p.Nested = len(p.Enum) == 0
	}
	if !p.Nested {
		return p
	}
	if sk := skeleton(raw, 0); bytes.HasPrefix(sk, []byte("{")) || bytes.HasPrefix(sk, []byte("[{")) {
		p.Skeleton = sk // an object, or an array of objects: a shape to fill in
	}
	return p
}

// typeName renders a "type" keyword: "string", or "string|null" for a list.
func typeName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return strings.Join(many, "|")
	}
	return "?"
}

// orderedObject returns the keys and values of a JSON object in document
// order (a null or missing object is empty).
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		values = append(values, v)
	}
	return names, values, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// Label renders a JSON value for display: a string without its quotes,
// anything else as compact JSON.
func Label(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(compact(raw))
}

// constBranches reads a oneOf or anyOf list whose every branch is
// {"const": v, "title"?: t}: the values and (when all have one) titles.
func constBranches(raw json.RawMessage) ([]json.RawMessage, []string, bool) {
	if len(raw) == 0 {
		return nil, nil, false
	}
	var branches []struct {
		Const json.RawMessage `json:"const"`
		Title *string         `json:"title"`
	}
	if json.Unmarshal(raw, &branches) != nil || len(branches) == 0 {
		return nil, nil, false
	}
	vals := make([]json.RawMessage, 0, len(branches))
	titles := make([]string, 0, len(branches))
	for _, b := range branches {
		if len(b.Const) == 0 {
			return nil, nil, false
		}
		vals = append(vals, compact(b.Const))
		if b.Title != nil {
			titles = append(titles, *b.Title)
		}
	}
	if len(titles) != len(vals) {
		titles = nil
	}
	return vals, titles, true
}
