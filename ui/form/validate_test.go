package form

import (
	"strings"
	"testing"
)

func TestValidation(t *testing.T) {
	tests := []struct {
		name  string
		keys  func(f *Form)
		issue string
	}{
		{"required missing", func(f *Form) {}, "value: required"},
		{"number does not parse", func(f *Form) {
			typeText(f, "v")
			f.Update(keyTab)
			f.Update(keyTab)
			typeText(f, "abc")
		}, "ratio: not a number"},
		{"integer not whole", func(f *Form) {
			typeText(f, "v")
			f.Update(keyTab)
			typeText(f, "1.5")
		}, "delay_ms: not a whole number"},
		{"schema minimum", func(f *Form) {
			typeText(f, "v")
			f.Update(keyTab)
			typeText(f, "-1")
		}, "delay_ms: minimum: got -1, want 0"},
		{"several at once", func(f *Form) {
			f.Update(keyTab)
			typeText(f, "x")
		}, "value: required; delay_ms: not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newForm(t, echoSchema, "")
			tt.keys(f)
			if act, _ := f.Update(keyCtrlS); act != None {
				t.Fatalf("submitted invalid arguments %s", f.Args())
			}
			if got := issues(f); got != tt.issue {
				t.Errorf("issues = %q, want %q", got, tt.issue)
			}
			if f.Args() != nil {
				t.Error("Args set while invalid")
			}
			if !strings.Contains(f.View(), "✗") {
				t.Error("the view shows no error")
			}
		})
	}
}

func TestErrorClearsWhenFieldChanges(t *testing.T) {
	f := newForm(t, echoSchema, "")
	f.Update(keyCtrlS)
	if issues(f) != "value: required" || f.focus != 0 {
		t.Fatalf("issues %q focus %d", issues(f), f.focus)
	}
	typeText(f, "x")
	if issues(f) != "" {
		t.Errorf("error kept after typing: %q", issues(f))
	}
}

func TestJSONSyntaxError(t *testing.T) {
	f := newForm(t, ``, "")
	if f.Mode() != ModeJSON || len(f.Warnings()) != 1 {
		t.Fatalf("no schema: mode %v warnings %v", f.Mode(), f.Warnings())
	}
	f.editor.SetValue("{\n  \"a\": ,\n}")
	f.Update(keyCtrlS)
	if got := issues(f); !strings.HasPrefix(got, ": line 2 col 8: invalid character ','") {
		t.Errorf("issues = %q", got)
	}
	f.editor.SetValue(`[1]`)
	f.Update(keyCtrlS)
	if got := issues(f); got != ": arguments must be a JSON object" {
		t.Errorf("issues = %q", got)
	}
	f.editor.SetValue(``)
	if act, _ := f.Update(keyCtrlS); act != Submit || string(f.Args()) != "{}" {
		t.Errorf("empty editor: action %v args %s", act, f.Args())
	}
}

func TestSchemaThatDoesNotCompile(t *testing.T) {
	tests := []struct{ name, schema string }{
		{"bad keyword value", `{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}},"required":["n"]}`},
		{"ref is not loaded", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"$ref":"file:///etc/passwd"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newForm(t, tt.schema, "")
			if len(f.Warnings()) != 1 || !strings.Contains(f.Warnings()[0], "does not compile") {
				t.Fatalf("warnings %v", f.Warnings())
			}
			if !strings.Contains(f.View(), "! inputSchema does not compile") {
				t.Error("warning not shown")
			}
			f.Update(keyCtrlS)
			if issues(f) != "n: required" {
				t.Errorf("field checks: %q", issues(f))
			}
			typeText(f, "2.5")
			f.Update(keyCtrlS)
			if issues(f) != "n: not a whole number" {
				t.Errorf("field checks: %q", issues(f))
			}
		})
	}
}
