package tools

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"echo", "echo"},
		{"--url", "--url"},
		{"http://127.0.0.1:3001/mcp", "http://127.0.0.1:3001/mcp"},
		{"", "''"},
		{"two words", "'two words'"},
		{`{"value":"hi"}`, `'{"value":"hi"}'`},
		{`it's`, `'it'\''s'`},
		{"$HOME `x` \\ *", "'$HOME `x` \\ *'"},
	} {
		if got := ShellQuote(tc.in); got != tc.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestShellQuoteRoundTrip: a real sh reads each quoted word back as it
// was, whatever it holds.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	words := []string{"plain", "", "two words", `it's`, `''`, `a'b"c`, "$HOME", "`id`", `back\slash`, "new\nline", "tab\tx", "*", "!x", "~", "é ü", `{"value":"it's \"q\""}`}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = ShellQuote(w)
	}
	out, err := exec.Command(sh, "-c", `printf '%s\0' `+strings.Join(quoted, " ")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !reflect.DeepEqual(got, words) {
		t.Fatalf("sh read back %q, want %q", got, words)
	}
}

func TestCallLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   string
		target []string
		want   string
	}{
		{"command", "{\n  \"value\": \"it's\"\n}", []string{"--", "npx", "-y", "@modelcontextprotocol/server-everything"},
			`sonde call echo --args '{"value":"it'\''s"}' -- npx -y @modelcontextprotocol/server-everything`},
		{"url", `{}`, []string{"--url", "http://127.0.0.1:3001/sse", "--transport", "sse"},
			`sonde call echo --url http://127.0.0.1:3001/sse --transport sse`},
		{"no args", ``, []string{"--server", "my server"}, `sonde call echo --server 'my server'`},
	} {
		if got := CallLine("echo", json.RawMessage(tc.args), tc.target); got != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestCopyCall: Y in the result view copies its call as a sonde call line
// (OSC 52) and says so on the rule under the header; in the list, the
// selected tool's last call; before any call it is off; with no target it
// says why nothing was copied.
func TestCopyCall(t *testing.T) {
	target := []string{"--", "./server", "--flag"}
	m := New(newModel(t, 78, 20).st, Options{CallTarget: target})
	m.SetSize(78, 20)
	m.SetTools(fixtureTools())
	if m.Keys().FullHelp()[2][3].Enabled() || m.Update(press('Y')) != nil {
		t.Fatal("Y before any call")
	}
	args := json.RawMessage(`{"value":"o'k"}`)
	m.Update(ResultMsg{Tool: "echo", Args: args, ID: jsonrpc.Int(3), Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "o'k"}}}})
	cmd := m.Update(press('Y'))
	want := `sonde call echo --args '{"value":"o'\''k"}' -- ./server --flag`
	if cmd == nil || fmt.Sprint(cmd()) != want {
		t.Fatalf("Y in the result view: %v", cmd)
	}
	if v := view(t, m); !strings.Contains(v, "copied to the clipboard: sonde call echo") {
		t.Errorf("no note of the copy:\n%s", v)
	}
	m.Update(keyDown)
	if v := view(t, m); strings.Contains(v, "copied to the clipboard") {
		t.Errorf("the note outlived the next key:\n%s", v)
	}

	// In the list: the last call of the selected tool (made from its form).
	m.Update(keyEsc)
	m.Update(keyEnter) // echo's form, its value field first
	typeText(m, "hi there")
	run(m.Update(keyCtrlS))
	if m.mode != modeList {
		t.Fatalf("after the call: mode %v", m.mode)
	}
	cmd = m.Update(press('Y'))
	if cmd == nil || fmt.Sprint(cmd()) != `sonde call echo --args '{"value":"hi there"}' -- ./server --flag` {
		t.Fatalf("Y in the list: %v", cmd)
	}

	none := newModel(t, 78, 20)
	none.Update(ResultMsg{Tool: "echo", Args: args})
	if cmd := none.Update(press('Y')); cmd != nil {
		t.Fatal("Y without a target copied")
	}
	if v := view(t, none); !strings.Contains(v, "no sonde call line for this session") {
		t.Errorf("Y without a target said nothing:\n%s", v)
	}
}
