package form

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

var (
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyTab      = tea.KeyPressMsg{Code: tea.KeyTab}
	keyShiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyLeft     = tea.KeyPressMsg{Code: tea.KeyLeft}
	keyRight    = tea.KeyPressMsg{Code: tea.KeyRight}
	keySpace    = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyCtrlS    = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keyCtrlE    = tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl}
	keyBack     = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

const echoSchema = `{"type":"object","properties":{
	"value":{"type":"string","description":"Text to return."},
	"delay_ms":{"type":"integer","minimum":0,"maximum":600000,"description":"Milliseconds to wait."},
	"ratio":{"type":"number"},
	"mode":{"enum":["fast","slow"],"default":"fast"},
	"loud":{"type":"boolean"}
},"required":["value"],"additionalProperties":false}`

func newForm(t *testing.T, schema string, prefill string) *Form {
	t.Helper()
	var pre json.RawMessage
	if prefill != "" {
		pre = json.RawMessage(prefill)
	}
	tool := mcp.Tool{Name: "echo"}
	if schema != "" {
		tool.InputSchema = json.RawMessage(schema)
	}
	f := New(theme.New(theme.NoColor()), DefaultKeyMap(), tool, pre)
	f.SetSize(78, 20)
	return f
}

func typeText(f *Form, s string) {
	for _, r := range s {
		f.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func issues(f *Form) string {
	var out []string
	for _, is := range f.Issues() {
		out = append(out, is.Field+": "+is.Msg)
	}
	return strings.Join(out, "; ")
}

func TestFieldsSubmit(t *testing.T) {
	f := newForm(t, echoSchema, "")
	if f.Mode() != ModeFields {
		t.Fatal("a simple schema opens in fields mode")
	}
	typeText(f, "hi there") // value
	f.Update(keyTab)
	typeText(f, "1e3") // delay_ms: whole, normalised
	f.Update(keyTab)
	typeText(f, "0.25") // ratio
	f.Update(keyDown)
	f.Update(keyRight) // mode: fast -> slow
	f.Update(keyTab)
	f.Update(keySpace) // loud: unset -> false
	f.Update(keySpace) // -> true
	act, _ := f.Update(keyCtrlS)
	if act != Submit {
		t.Fatalf("action = %v, issues: %s", act, issues(f))
	}
	want := `{"value":"hi there","delay_ms":1000,"ratio":0.25,"mode":"slow","loud":true}`
	if got := string(f.Args()); got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
}

func TestEnterMovesThenSubmitsOnLastField(t *testing.T) {
	f := newForm(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`, "")
	if act, _ := f.Update(keyEnter); act != None || f.focus != 1 {
		t.Fatalf("enter on the first field: action %v, focus %d", act, f.focus)
	}
	typeText(f, "x")
	if act, _ := f.Update(keyEnter); act != Submit || string(f.Args()) != `{"b":"x"}` {
		t.Fatalf("enter on the last field: action %v, args %s", act, f.Args())
	}
}

func TestNavigationWraps(t *testing.T) {
	f := newForm(t, echoSchema, "")
	f.Update(keyShiftTab)
	if f.focus != 4 {
		t.Fatalf("shift+tab from the first field: focus %d", f.focus)
	}
	f.Update(keyDown)
	f.Update(keyUp)
	f.Update(keyUp)
	if f.focus != 3 {
		t.Errorf("focus %d, want 3", f.focus)
	}
	f.Update(keyLeft) // mode is optional: fast -> unset
	if v, ok, _ := f.fields[3].value(); ok {
		t.Errorf("mode = %s, want unset", v)
	}
}

func TestNestedOpensJSONEditor(t *testing.T) {
	f := newForm(t, `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}},"n":{"type":"integer","default":2}},"required":["tags"]}`, "")
	if f.Mode() != ModeJSON {
		t.Fatal("a nested property opens the JSON editor")
	}
	if got := f.editor.Value(); got != "{\n  \"n\": 2\n}" {
		t.Errorf("editor pre-filled with %q", got)
	}
	if act, _ := f.Update(keyCtrlS); act != None || !strings.Contains(issues(f), "tags: required") {
		t.Fatalf("action %v issues %q", act, issues(f))
	}
	if !strings.Contains(f.View(), "✗ tags: required") {
		t.Errorf("error not under the editor:\n%s", f.View())
	}
	f.editor.SetValue(`{"tags": ["a", 1], "n": 2}`)
	if act, _ := f.Update(keyCtrlS); act != None || !strings.Contains(issues(f), "tags: /1: got number, want string") {
		t.Fatalf("action %v issues %q", act, issues(f))
	}
	f.editor.SetValue(`{"tags": ["a"], "n": 2}`)
	if act, _ := f.Update(keyCtrlS); act != Submit || string(f.Args()) != `{"tags":["a"],"n":2}` {
		t.Fatalf("action %v args %s issues %q", act, f.Args(), issues(f))
	}
}

func TestToggleRoundTrip(t *testing.T) {
	f := newForm(t, echoSchema, "")
	typeText(f, "hi")
	f.Update(keyTab)
	typeText(f, "12x") // does not parse: left out of the JSON
	f.Update(keyCtrlE)
	if f.Mode() != ModeJSON {
		t.Fatal("ctrl+e did not open the editor")
	}
	if got := f.editor.Value(); got != "{\n  \"value\": \"hi\",\n  \"mode\": \"fast\"\n}" {
		t.Errorf("editor = %q", got)
	}
	f.editor.SetValue(`{"value":"yo","loud":true,"extra":[1]}`)
	f.Update(keyCtrlE)
	if f.Mode() != ModeFields {
		t.Fatalf("ctrl+e did not go back: %s", issues(f))
	}
	if f.fields[0].input.Value() != "yo" || f.fields[1].input.Value() != "" {
		t.Errorf("fields not set from JSON: %q %q", f.fields[0].input.Value(), f.fields[1].input.Value())
	}
	if !strings.Contains(f.View(), "+ 1 more key(s) from JSON: extra") {
		t.Errorf("extra keys not shown:\n%s", f.View())
	}
	// additionalProperties is false: the schema rejects the extra key.
	if act, _ := f.Update(keyCtrlS); act != None || !strings.Contains(issues(f), "additional properties 'extra' not allowed") {
		t.Errorf("action %v issues %q", act, issues(f))
	}
	f.Update(keyCtrlE)
	f.editor.SetValue(`{"value":`)
	f.Update(keyCtrlE)
	if f.Mode() != ModeJSON || !strings.Contains(issues(f), "fix it to go back") {
		t.Errorf("invalid JSON switched back: mode %v issues %q", f.Mode(), issues(f))
	}
}

func TestPrefill(t *testing.T) {
	f := newForm(t, echoSchema, `{"value":"again","delay_ms":5,"loud":false}`)
	if act, _ := f.Update(keyCtrlS); act != Submit {
		t.Fatalf("issues %q", issues(f))
	}
	if got := string(f.Args()); got != `{"value":"again","delay_ms":5,"loud":false}` {
		t.Errorf("args = %s (mode had a default but the previous call left it out)", got)
	}
}

func TestCancelAndKeys(t *testing.T) {
	f := newForm(t, echoSchema, "")
	k := f.Keys()
	if !k.Submit.Enabled() || !k.Next.Enabled() || k.Toggle.Enabled() || k.CycleNext.Enabled() {
		t.Error("keys on a text field")
	}
	f.Update(keyShiftTab) // loud
	if k := f.Keys(); !k.Toggle.Enabled() || !k.CycleNext.Enabled() {
		t.Error("toggle disabled on a boolean")
	}
	f.Update(keyCtrlE)
	if k := f.Keys(); k.Next.Enabled() || k.Enter.Enabled() || !k.Submit.Enabled() {
		t.Error("field keys enabled in the JSON editor")
	}
	for _, b := range k.All() {
		if b.Help().Key == "" || b.Help().Desc == "" {
			t.Errorf("binding %v has no help", b.Keys())
		}
	}
	if act, _ := f.Update(keyEsc); act != Cancel {
		t.Errorf("esc: %v", act)
	}
}

func TestClickFocusesField(t *testing.T) {
	f := newForm(t, echoSchema, "")
	f.Update(tea.MouseClickMsg{X: 5, Y: 1 + 2*2, Button: tea.MouseLeft}) // third field, first line
	if f.focus != 2 {
		t.Errorf("focus %d after click", f.focus)
	}
	f.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if f.focus != 3 {
		t.Errorf("focus %d after wheel", f.focus)
	}
	f.Update(keyBack)
}

// entitiesSchema is an array-of-object argument, as a knowledge-graph
// server's create_entities has: the JSON editor starts from its shape.
const entitiesSchema = `{"type":"object","properties":{
	"entities":{"type":"array","items":{"type":"object","properties":{
		"name":{"type":"string"},"entityType":{"type":"string"},"observations":{"type":"array","items":{"type":"string"}},
		"weight":{"type":"number"},"meta":{"type":"object","properties":{"source":{"type":"string"},"ok":{"type":"boolean"}},"required":["ok"]}
	},"required":["name","entityType","observations","meta"]}},
	"dryRun":{"type":"boolean","default":false},
	"extra":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]}}
},"required":["entities"]}`

// A required array-of-object argument starts, in the JSON editor, as one
// object with the item's required fields (each of its type: "", 0,
// false, [], or an object of its own required fields); optional ones and
// the user's own values are left as they are. Golden at the Tools pane's
// zoomed size at 80x24.
func TestJSONSkeleton(t *testing.T) {
	f := newForm(t, entitiesSchema, "")
	if f.Mode() != ModeJSON {
		t.Fatal("an array of objects opens the JSON editor")
	}
	want := `{
  "entities": [
    {
      "name": "",
      "entityType": "",
      "observations": [],
      "meta": {
        "ok": false
      }
    }
  ],
  "dryRun": false
}`
	if got := f.editor.Value(); got != want {
		t.Errorf("editor starts with\n%s\nwant\n%s", got, want)
	}
	f.SetSize(78, 20)
	golden.Assert(t, "json_skeleton_78x20", ansi.Strip(f.View()))
	// A value of the user's is kept: no skeleton over it.
	f = newForm(t, entitiesSchema, `{"entities":[{"name":"x"}]}`)
	if got := f.editor.Value(); strings.Contains(got, "entityType") {
		t.Errorf("a skeleton replaced the prefill:\n%s", got)
	}
}
