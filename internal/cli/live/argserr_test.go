package live

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArgsError: a syntax error names its line and column, and the caret
// stands under the character the error is about, on a long line too.
func TestArgsError(t *testing.T) {
	long := `{"q": "` + strings.Repeat("x", 100) + `" "next": 1}`
	for _, tc := range []struct {
		text, want string
	}{
		{`{"value": "hi",}`, "(line 1, column 16)\n  {\"value\": \"hi\",}\n                 ^"},
		{"{\n\"a\": tru\n}", "(line 2, column 9)"},
		{long, "(line 1, column 110)\n  …" + strings.Repeat("x", 38) + `" "next": 1}` + "\n  " + strings.Repeat(" ", 41) + "^"},
		{"{\"a\":\"\x1b[2J\" x}", `\x1b[2J`},
	} {
		var obj map[string]json.RawMessage
		err := json.Unmarshal([]byte(tc.text), &obj)
		got := argsError(tc.text, err)
		if !strings.Contains(got, tc.want) {
			t.Errorf("argsError(%q) =\n%s\nwant it to hold\n%s", tc.text, got, tc.want)
		}
		if strings.Contains(got, "\x1b") {
			t.Errorf("argsError(%q) prints a raw escape", tc.text)
		}
	}
}
