package answer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var press = uitest.Press

// typeText sends each rune of s as a key press.
func typeText(t *testing.T, u interface {
	Update(tea.Msg) (Action, tea.Cmd)
}, s string) {
	t.Helper()
	for _, r := range s {
		if act, _ := u.Update(tea.KeyPressMsg{Code: r, Text: string(r)}); act != None {
			t.Fatalf("typing %q: action %d", r, act)
		}
	}
}

func st() *theme.Styles { return theme.New(theme.NoColor()) }

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],` +
	`"systemPrompt":"You are a helpful test server.","maxTokens":100}`

// elicitSchema is like server-everything's: a required field, defaults,
// an enum, a boolean.
const elicitParams = `{"message":"Please provide inputs","requestedSchema":{"type":"object","properties":{` +
	`"name":{"type":"string","description":"Your full name"},` +
	`"check":{"type":"boolean","description":"Agree to the terms"},` +
	`"firstLine":{"type":"string","default":"It was a dark and stormy night."},` +
	`"integer":{"type":"integer","minimum":1,"maximum":100,"default":42},` +
	`"pet":{"type":"string","enum":["cat","dog"],"default":"dog"}},"required":["name"]}}`

func req(method, params string) client.ServerRequest {
	return client.ServerRequest{ID: jsonrpc.Int(0), Method: method, Params: json.RawMessage(params)}
}

func view(d interface{ View() string }) string { return ansi.Strip(d.View()) }

func TestSampling(t *testing.T) {
	d := New(st(), req(mcp.MethodCreateMessage, samplingParams))
	d.SetSize(70, 16)
	if d.Kind() != Sampling || !d.Capturing() {
		t.Fatalf("kind %d", d.Kind())
	}
	golden.Assert(t, "sampling_70x16", view(d))
	typeText(t, d, "Paris.")
	d.Update(press("tab"))
	d.Update(press("ctrl+u")) // clear the model name
	typeText(t, d, "human-1")
	if act, _ := d.Update(press("ctrl+s")); act != Send {
		t.Fatalf("ctrl+s: %d", act)
	}
	res, rpcErr := d.Answer()
	var got mcp.CreateMessageResult
	if rpcErr != nil || json.Unmarshal(res, &got) != nil {
		t.Fatalf("%s %v", res, rpcErr)
	}
	if got.Role != "assistant" || got.Content.Text != "Paris." || got.Model != "human-1" || got.Content.Type != "text" {
		t.Fatalf("result %+v", got)
	}
}

func TestSamplingRefuseAndLater(t *testing.T) {
	d := New(st(), req(mcp.MethodCreateMessage, samplingParams))
	d.SetSize(70, 16)
	if act, _ := d.Update(press("esc")); act != Later {
		t.Fatalf("esc: %d", act)
	}
	if act, _ := d.Update(press("ctrl+x")); act != Send {
		t.Fatalf("ctrl+x: %d", act)
	}
	if res, rpcErr := d.Answer(); res != nil || rpcErr == nil || rpcErr.Code != RefusedCode {
		t.Fatalf("%s %v", res, rpcErr)
	}
}

func TestSamplingBadParams(t *testing.T) {
	d := New(st(), req(mcp.MethodCreateMessage, `{"messages":"nope"}`))
	d.SetSize(60, 12)
	if !strings.Contains(view(d), "params are not a CreateMessageRequest") {
		t.Fatal(view(d))
	}
}

func TestElicitForm(t *testing.T) {
	d := New(st(), req(mcp.MethodElicit, elicitParams))
	d.SetSize(70, 18)
	if d.Kind() != Form {
		t.Fatalf("kind %d", d.Kind())
	}
	golden.Assert(t, "form_70x18", view(d))
	// name is required: accept is refused until it is filled.
	if act, _ := d.Update(press("ctrl+s")); act != None {
		t.Fatalf("accept without name: %d", act)
	}
	if !strings.Contains(view(d), "required") {
		t.Fatalf("no required mark:\n%s", view(d))
	}
	typeText(t, d, "Ada")
	if act, _ := d.Update(press("ctrl+s")); act != Send {
		t.Fatalf("accept: %d\n%s", act, view(d))
	}
	res, _ := d.Answer()
	var got struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	// Defaults are pre-filled and sent; the boolean left unset is not.
	want := map[string]any{"name": "Ada", "firstLine": "It was a dark and stormy night.", "integer": float64(42), "pet": "dog"}
	if got.Action != "accept" || len(got.Content) != len(want) {
		t.Fatalf("result %s", res)
	}
	for k, v := range want {
		if got.Content[k] != v {
			t.Fatalf("%s = %v, want %v (%s)", k, got.Content[k], v, res)
		}
	}
}

func TestElicitDeclineCancelLater(t *testing.T) {
	for _, tc := range []struct {
		key, want string
		act       Action
	}{
		{"ctrl+x", `{"action":"decline"}`, Send},
		{"ctrl+o", `{"action":"cancel"}`, Send},
		{"esc", "", Later},
	} {
		d := New(st(), req(mcp.MethodElicit, elicitParams))
		d.SetSize(70, 18)
		act, _ := d.Update(press(tc.key))
		res, _ := d.Answer()
		if act != tc.act || string(res) != tc.want {
			t.Errorf("%s: action %d, answer %s", tc.key, act, res)
		}
	}
}

func TestElicitURL(t *testing.T) {
	params := `{"mode":"url","message":"Please sign in.","url":"https://example.com/login","elicitationId":"e-1"}`
	for _, tc := range []struct{ key, want string }{
		{"a", `{"action":"accept"}`}, {"d", `{"action":"decline"}`}, {"c", `{"action":"cancel"}`}, {"ctrl+s", `{"action":"accept"}`},
	} {
		d := New(st(), req(mcp.MethodElicit, params))
		d.SetSize(70, 12)
		if d.Kind() != URL || d.Capturing() {
			t.Fatalf("kind %d", d.Kind())
		}
		if tc.key == "a" {
			golden.Assert(t, "url_70x12", view(d))
		}
		act, _ := d.Update(press(tc.key))
		if res, _ := d.Answer(); act != Send || string(res) != tc.want {
			t.Errorf("%s: %d %s", tc.key, act, res)
		}
	}
	// y copies the URL (OSC 52) and answers nothing.
	d := New(st(), req(mcp.MethodElicit, params))
	act, cmd := d.Update(press("y"))
	if act != None || cmd == nil || !isClipboard(cmd(), "https://example.com/login") {
		t.Fatalf("y: action %d", act)
	}
}

// isClipboard reports whether msg is what tea.SetClipboard(text) sends
// (its type is unexported: it is recognised by name and value).
func isClipboard(msg tea.Msg, text string) bool {
	return fmt.Sprintf("%T", msg) == "tea.setClipboardMsg" && fmt.Sprint(msg) == text
}

func TestRootsEditor(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "proj")
	os.Mkdir(sub, 0o755)
	first := mcp.Root{URI: "file:///first", Name: "first"}
	r := NewRoots(st(), []mcp.Root{first})
	r.SetSize(70, 10)
	if act, _ := r.Update(press("enter")); act != Later {
		t.Fatalf("enter with no change: %d", act)
	}
	r.Update(press("a"))
	if !r.Capturing() {
		t.Fatal("a does not start typing a directory")
	}
	// A directory that does not exist is refused with the reason.
	typeText(t, r, filepath.Join(dir, "missing"))
	_, cmd := r.Update(press("enter"))
	r.Update(cmd())
	if !strings.Contains(view(r), "no such directory") || !r.Capturing() {
		t.Fatalf("missing dir:\n%s", view(r))
	}
	r.Update(press("ctrl+u"))
	typeText(t, r, sub)
	_, cmd = r.Update(press("enter"))
	r.Update(cmd())
	if r.Capturing() || !r.Changed() {
		t.Fatalf("not added:\n%s", view(r))
	}
	// The temporary directory's name varies: replaced, with the lines' trailing spaces cut.
	lines := strings.Split(strings.ReplaceAll(view(r), dir, "/TMP"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	golden.Assert(t, "roots_70x10", strings.Join(lines, "\n"))
	r.Update(press("k"))
	r.Update(press("d")) // removes the first root
	if act, _ := r.Update(press("enter")); act != Send {
		t.Fatalf("apply: %d", act)
	}
	got := r.List()
	if len(got) != 1 || got[0].Name != "proj" || !strings.HasPrefix(got[0].URI, "file:///") {
		t.Fatalf("roots %+v", got)
	}
	// esc discards.
	r2 := NewRoots(st(), []mcp.Root{first})
	r2.Update(press("d"))
	if act, _ := r2.Update(press("esc")); act != Later {
		t.Fatalf("esc: %d", act)
	}
}
