package form

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s := Parse(json.RawMessage(`{"type":"object","properties":{
		"zeta":{"type":"string","description":"last letter, first listed"},
		"count":{"type":"integer","default":3},
		"ratio":{"type":"number"},
		"on":{"type":"boolean"},
		"mode":{"enum":["a","b"]},
		"fixed":{"const":7},
		"tags":{"type":"array","items":{"type":"string"}},
		"opt":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"nullable":{"type":["string","null"]},
		"free":{}
	},"required":["zeta","mode"]}`))
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	var got []string
	for _, p := range s.Props {
		got = append(got, p.Name+":"+p.Type+":"+map[bool]string{true: "nested", false: "simple"}[p.Nested]+
			":"+map[bool]string{true: "req", false: "opt"}[p.Required])
	}
	want := "zeta:string:simple:req count:integer:simple:opt ratio:number:simple:opt on:boolean:simple:opt " +
		"mode:enum:simple:req fixed:enum:simple:opt tags:array:nested:opt opt:anyOf:nested:opt " +
		"nullable:string|null:nested:opt free:any:nested:opt"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("props:\n got %s\nwant %s", g, want)
	}
	if s.Simple {
		t.Error("Simple is true with nested properties")
	}
	if d := string(s.Props[1].Default); d != "3" {
		t.Errorf("default = %q", d)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"missing", ``, ErrNoSchema.Error()},
		{"null", `null`, ErrNoSchema.Error()},
		{"not an object", `[1]`, "not a JSON object"},
		{"not object type", `{"type":"string"}`, "type string, not object"},
		{"bad properties", `{"type":"object","properties":[]}`, "properties"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse(json.RawMessage(tt.schema))
			if s.Err == nil || !strings.Contains(s.Err.Error(), tt.want) {
				t.Fatalf("Err = %v, want it to mention %q", s.Err, tt.want)
			}
			if tt.want == ErrNoSchema.Error() && !errors.Is(s.Err, ErrNoSchema) {
				t.Errorf("Err is not ErrNoSchema")
			}
		})
	}
	if s := Parse(json.RawMessage(`{"type":"object"}`)); s.Err != nil || len(s.Props) != 0 || !s.Simple {
		t.Errorf("empty object schema: %+v", s)
	}
}

func TestCheckValue(t *testing.T) {
	tests := []struct {
		name string
		prop Prop
		raw  string
		want string
	}{
		{"string ok", Prop{Type: "string"}, `"x"`, ""},
		{"string wrong", Prop{Type: "string"}, `3`, "must be a string"},
		{"number ok", Prop{Type: "number"}, `-1.5e3`, ""},
		{"number wrong", Prop{Type: "number"}, `"3"`, "must be a number"},
		{"integer whole exponent", Prop{Type: "integer"}, `1e3`, ""},
		{"integer fraction", Prop{Type: "integer"}, `1.5`, "must be a whole number"},
		{"boolean", Prop{Type: "boolean"}, `"true"`, "must be true or false"},
		{"enum ok", Prop{Enum: []json.RawMessage{[]byte(`"a"`), []byte(`2`)}}, `2.0`, ""},
		{"enum miss", Prop{Enum: []json.RawMessage{[]byte(`"a"`), []byte(`2`)}}, `"b"`, "must be one of a, 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkValue(tt.prop, json.RawMessage(tt.raw)); got != tt.want {
				t.Errorf("checkValue(%s) = %q, want %q", tt.raw, got, tt.want)
			}
		})
	}
}
