package form

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// styling is the only escape sequence a NoColor form draws: SGR resets and
// the attributes the theme uses (bold, faint, underline, reverse).
var styling = regexp.MustCompile(`\x1b\[(?:(?:0|1|2|4|7|22|24|27)(?:;(?:0|1|2|4|7|22|24|27))*)?m`)

// FuzzForm: any inputSchema and prefill from a server or a previous call
// builds a form (Parse reports an error with no properties, or the
// properties), and the form drawn small and large, as fields and as JSON,
// is exactly the size asked, valid UTF-8, with no escape sequence but the
// theme's styling and no control character but the line breaks, whatever
// the names, titles, descriptions, enums and defaults hold. text is also
// put in every one of those places of a fixed schema, so hostile strings
// reach the drawing whatever the mutator does to the JSON.
func FuzzForm(f *testing.F) {
	f.Add([]byte(echoSchema), []byte(`{"value":"hi","mode":"slow","extra":[1]}`), "plain")
	f.Add([]byte(`{"type":"object","properties":{"c":{"oneOf":[{"const":"a","title":"\u001b]0;t\u0007A"},{"const":"b","title":"B\u009b2J"}]}}}`), []byte(`{"c":"b"}`), "\x1b[31mred\x1b[0m")
	f.Add([]byte(`{"type":"object","properties":{"n":{"type":"array","items":{"enum":["x","y"]}},"o":{"type":"object"},"r":{"$ref":"#/x"}}}`), []byte(`null`), "\x9b\x07\x00\r\n\t\u0085\u2028")
	f.Add([]byte(`{"type":"string"}`), []byte(`[]`), "")
	f.Add([]byte(`{"properties":{"\u001b[2J":{"description":"\u001bP\u001b\\","enum":[1,2],"enumNames":["\u001b[5m","\u007f"]}}}`), []byte(`{"\u001b[2J":2}`), "\xff\xfe")
	f.Add([]byte(`{"properties":[]}`), []byte(`{`), "宽字符宽字符宽字符宽字符宽字符")
	f.Add([]byte(`true`), []byte(``), "e\u0301\u200d\U0001F469\u200d\U0001F4BB")
	f.Fuzz(func(t *testing.T, schema, prefill []byte, text string) {
		s := Parse(schema)
		if s.Err != nil && len(s.Props) > 0 {
			t.Fatalf("Parse(%q): error %v and %d properties", schema, s.Err, len(s.Props))
		}
		check(t, mcp.Tool{Name: "t", InputSchema: schema}, prefill)
		q, _ := json.Marshal(text)
		fixed := `{"type":"object","properties":{` + string(q) + `:{"type":"string","title":` + string(q) + `,"description":` + string(q) + `,"default":` + string(q) + `},
			"e":{"enum":[` + string(q) + `,1],"enumNames":[` + string(q) + `,"one"],"description":` + string(q) + `},
			"c":{"anyOf":[{"const":` + string(q) + `,"title":` + string(q) + `}]},
			"m":{"type":"array","items":{"enum":[` + string(q) + `]}},"x":{"type":"object","description":` + string(q) + `}},"required":[` + string(q) + `]}`
		check(t, mcp.Tool{Name: text, Description: text, InputSchema: json.RawMessage(fixed)}, prefill)
		check(t, mcp.Tool{Name: text, Description: text, InputSchema: json.RawMessage(fixed)}, json.RawMessage(`{"e":`+string(q)+`,`+string(q)+`:`+string(q)+`,"zz":`+string(q)+`}`))
	})
}

// check builds the form and draws it at two sizes, as fields and as JSON.
func check(t *testing.T, tool mcp.Tool, prefill json.RawMessage) {
	t.Helper()
	fm := New(theme.New(theme.NoColor()), DefaultKeyMap(), tool, prefill)
	for range 2 {
		for _, sz := range [][2]int{{16, 5}, {200, 60}} {
			fm.SetSize(sz[0], sz[1])
			safeView(t, fm.View(), sz[0], sz[1])
		}
		fm.Update(keyCtrlE) // fields ⇄ JSON (refused, and so drawn again, when the JSON does not fit the fields)
	}
}

func safeView(t *testing.T, v string, w, h int) {
	t.Helper()
	uitest.CheckScreen(t, v, w, h)
	bare := styling.ReplaceAllString(v, "")
	if !utf8.ValidString(bare) {
		t.Fatalf("%dx%d: not valid UTF-8: %q", w, h, v)
	}
	for _, r := range bare {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			t.Fatalf("%dx%d: control %U drawn raw: %q", w, h, r, v)
		}
	}
}
