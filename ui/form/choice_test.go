package form

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// The enum forms of elicitation schemas (SEP-1330): titled consts in oneOf
// or anyOf, legacy enumNames, and multi-select arrays, each a simple field.
func TestTitledEnumsAndMultiSelect(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"hero":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Wonder Woman"}],"default":"hero-2"},
		"pet":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"]},
		"fish":{"type":"array","items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]},"default":["fish-1"]},
		"tools":{"type":"array","items":{"type":"string","enum":["Guitar","Piano"]},"minItems":1},
		"mixed":{"oneOf":[{"const":"a"},{"type":"string"}]}
	},"required":["tools"]}`)
	s := Parse(schema)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	byName := map[string]Prop{}
	for _, p := range s.Props {
		byName[p.Name] = p
	}
	if p := byName["hero"]; p.Nested || len(p.Enum) != 2 || strings.Join(p.EnumTitles, ",") != "Superman,Wonder Woman" {
		t.Errorf("hero %+v", p)
	}
	if p := byName["pet"]; p.Nested || strings.Join(p.EnumTitles, ",") != "Cats,Dogs" {
		t.Errorf("pet %+v", p)
	}
	if p := byName["fish"]; p.Nested || p.Type != "array" || len(p.Items) != 2 {
		t.Errorf("fish %+v", p)
	}
	if p := byName["tools"]; p.Nested || len(p.Items) != 2 {
		t.Errorf("tools %+v", p)
	}
	// A oneOf that is not all consts still needs the JSON editor.
	if p := byName["mixed"]; !p.Nested {
		t.Errorf("mixed %+v", p)
	}

	delete(byName, "mixed")
	f := New(theme.New(theme.NoColor()), DefaultKeyMap(), mcp.Tool{Name: "t", InputSchema: json.RawMessage(strings.Replace(string(schema),
		`,
		"mixed":{"oneOf":[{"const":"a"},{"type":"string"}]}`, "", 1))}, nil)
	f.SetSize(80, 14)
	if f.Mode() != ModeFields {
		t.Fatalf("mode %d: %v", f.Mode(), f.Warnings())
	}
	v := ansi.Strip(f.View())
	for _, want := range []string{"‹ Wonder Woman (hero-2) ›", `["fish-1"]`, `JSON array of "Guitar", "Piano"`} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	// tools is required (and minItems 1, checked by the schema).
	if act := f.submit(); act != None {
		t.Fatal("submitted without the required array")
	}
	f.fields[3].input.SetValue(`["Piano"]`)
	if act := f.submit(); act != Submit {
		t.Fatalf("submit: %v", f.Issues())
	}
	if got := string(f.Args()); got != `{"hero":"hero-2","fish":["fish-1"],"tools":["Piano"]}` {
		t.Fatalf("args %s", got)
	}
	f.fields[3].input.SetValue(`["Drums"]`)
	if act := f.submit(); act != None {
		t.Fatal("a value outside the items' enum was accepted")
	}
}
