package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// captureOf writes a capture from lines: ">" a message the client sent,
// "<" one the server wrote (a line that is not JSON too), "http {…}" an
// http record, "restart" a restart record, "session V" a
// session record with protocol version V.
func captureOf(t *testing.T, lines ...string) *Script {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"header","format":"sonde-capture","version":"1.0","sonde":"test","start":"2026-11-29T13:49:57Z","transport":"stdio"}` + "\n")
	for i, l := range lines {
		seq, at := i+1, (i+1)*1000
		switch {
		case l == "restart":
			fmt.Fprintf(&b, `{"type":"restart","seq":%d,"t":%d}`+"\n", seq, at)
			continue
		case strings.HasPrefix(l, "http "):
			fmt.Fprintf(&b, `{"type":"http","seq":%d,"t":%d,"http":%s}`+"\n", seq, at, l[5:])
			continue
		case strings.HasPrefix(l, "session "):
			fmt.Fprintf(&b, `{"type":"session","seq":%d,"t":%d,"protocol_version":%q,"server_name":"srv","server_version":"1"}`+"\n", seq, at, l[8:])
			continue
		}
		dir, raw := "out", l[1:]
		if l[0] == '<' {
			dir = "in"
		}
		msg, err := jsonrpc.Decode([]byte(raw))
		rec := map[string]any{"type": "frame", "seq": seq, "t": at, "dir": dir, "raw": raw}
		switch {
		case err != nil:
			rec["kind"] = "invalid"
		case msg.Kind == jsonrpc.KindRequest:
			rec["kind"], rec["method"], rec["id"] = "request", msg.Method, msg.ID
		case msg.Kind == jsonrpc.KindNotification:
			rec["kind"], rec["method"] = "notification", msg.Method
		case msg.Kind == jsonrpc.KindResponse:
			rec["kind"], rec["id"] = "response", msg.ID
		}
		j, _ := json.Marshal(rec)
		b.Write(append(j, '\n'))
	}
	s, err := Build(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Fatalf("warnings: %v", s.Warnings)
	}
	return s
}

// serveLines runs Serve over input lines and returns its output lines
// (sorted: the recorded lines are played by their own goroutines) and its
// log.
func serveLines(t *testing.T, s *Script, o Options, in ...string) ([]string, string) {
	t.Helper()
	var out, log bytes.Buffer
	o.Log = &log
	if err := Serve(context.Background(), s, strings.NewReader(strings.Join(in, "\n")+"\n"), &out, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	sort.Strings(lines)
	return lines, log.String()
}

const (
	initV1 = `>{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	initR1 = `<{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{},"resources":{"subscribe":true},"prompts":{}},"serverInfo":{"name":"srv","version":"1"}}}`
)

// TestServeSynthesized: housekeeping the capture does not hold is answered
// (and logged as synthesized) from what the recorded server declared; the
// list methods get the newest recorded answer whatever their params; with
// Strict only ping is.
func TestServeSynthesized(t *testing.T) {
	s := captureOf(t, "session 2025-06-18", initV1, initR1,
		`>{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`<{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}`,
		`>{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`,
		`<{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a"},{"name":"b"}]}}`,
	)
	in := []string{
		`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"x://y"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"x":1},"extra":true}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"c2"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
	}
	out, log := serveLines(t, s, Options{}, in...)
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"prompts":[]}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"resourceTemplates":[]}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"completion":{"values":[],"total":0,"hasMore":false}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"a"},{"name":"b"}]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32010,`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
	}
	if len(out) != len(want) {
		t.Fatalf("output:\n%s", strings.Join(out, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(out[i], want[i]) {
			t.Errorf("line %d: %s\nwant %s", i, out[i], want[i])
		}
	}
	for _, w := range []string{
		"logging/setLevel id 1: not recorded, answered {} (the recorded server declared logging) (synthesized)",
		"notifications/roots/list_changed: not recorded, accepted (synthesized)",
		"tools/list id 6: recorded id 3 (newest match, params differ at extra)",
	} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}

	out, log = serveLines(t, s, Options{Strict: true}, in[0], in[3], in[6], in[8])
	if !strings.Contains(out[0], `"id":1,"error":{"code":-32010`) || !strings.Contains(out[1], `"id":3,"error":{"code":-32010`) ||
		out[2] != `{"jsonrpc":"2.0","id":6,"result":{"tools":[{"name":"a"}]}}` || out[3] != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Errorf("strict:\n%s\n%s", strings.Join(out, "\n"), log)
	}
}

// TestServeHandshakeVersion: the recorded version when the client asks for
// it; the client's when the recorded server answered it in some recorded
// session; else the recorded one. server/discover is synthesized from the
// recorded initialize.
func TestServeHandshakeVersion(t *testing.T) {
	s := captureOf(t, "session 2025-06-18", initV1, initR1, "restart", "session 2025-11-25",
		strings.Replace(strings.Replace(initV1, "2025-06-18", "2025-11-25", 1), `"id":1`, `"id":1`, 1),
		strings.Replace(initR1, "2025-06-18", "2025-11-25", 1))
	ask := func(v string) string {
		return `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	}
	for _, tc := range []struct {
		session     int
		asked, want string
	}{
		{1, "2025-06-18", "2025-06-18"},
		{1, "2025-11-25", "2025-06-18"}, // session 1 alone never answered 2025-11-25
		{0, "2025-11-25", "2025-11-25"},
		{1, "2024-11-05", "2025-06-18"},
	} {
		out, log := serveLines(t, s, Options{Session: tc.session}, ask(tc.asked))
		if !strings.Contains(out[0], `"protocolVersion":"`+tc.want+`"`) || !strings.Contains(out[0], `"id":"i"`) {
			t.Errorf("session %d, asked %s: %s\n%s", tc.session, tc.asked, out[0], log)
		}
	}
	out, _ := serveLines(t, s, Options{Session: 2}, ask("2025-06-18"))
	if !strings.Contains(out[0], `"protocolVersion":"2025-11-25"`) {
		t.Errorf("session 2 alone: %s", out[0])
	}
	out, log := serveLines(t, s, Options{Session: 1}, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2025-06-18"],"capabilities":{"logging":{},"prompts":{},"resources":{"subscribe":true},"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"srv","version":"1"}}}}`
	if out[0] != want {
		t.Errorf("discover: %s\nwant %s\n%s", out[0], want, log)
	}
	// --repeat fail: the recorded list once, then an error, not an empty list.
	list := func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id) }
	l := captureOf(t, initV1, initR1, `>{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `<{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"}]}}`)
	out, _ = serveLines(t, l, Options{Repeat: RepeatFail}, list(1), list(2))
	if out[0] != `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}` || !strings.Contains(out[1], `"id":2,"error":{"code":-32010`) {
		t.Errorf("--repeat fail list:\n%s", strings.Join(out, "\n"))
	}
	if _, err := s.session(3, Options{}); err == nil {
		t.Errorf("session 3 of 2 accepted")
	}
}

// TestServeRepeat: identical requests get the recorded answers in recorded
// order, then again (cycle), the last one (last) or an error (fail).
func TestServeRepeat(t *testing.T) {
	s := captureOf(t, initV1, initR1,
		`>{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","id":2,"result":{"n":1}}`,
		`>{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`<{"jsonrpc":"2.0","id":3,"result":{"n":2}}`,
	)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`, id)
	}
	for _, tc := range []struct {
		repeat Repeat
		want   string
	}{
		{RepeatCycle, `{"n":1} {"n":2} {"n":1}`},
		{RepeatLast, `{"n":1} {"n":2} {"n":2}`},
		{RepeatFail, `{"n":1} {"n":2} -32010`},
	} {
		out, _ := serveLines(t, s, Options{Repeat: tc.repeat}, call(7), call(8), call(9))
		var got []string
		for _, l := range out {
			var m struct {
				Result json.RawMessage
				Error  *jsonrpc.Error
			}
			json.Unmarshal([]byte(l), &m)
			if m.Error != nil {
				got = append(got, fmt.Sprint(m.Error.Code))
				if !strings.Contains(m.Error.Message, `nearest: tools/call "echo" (recorded id 2), whose recorded answers were all played (--repeat fail)`) {
					t.Errorf("fail: %s", m.Error.Message)
				}
				continue
			}
			got = append(got, string(m.Result))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %s, want %s", tc.repeat, strings.Join(got, " "), tc.want)
		}
	}
}

// TestServeModernCapture: a capture of a modern-era session (server/discover,
// no initialize) serves a modern client its recorded discovery, and a
// legacy client an initialize made from that discovery: the client's
// version when the discovery lists it, the server's info and capabilities.
func TestServeModernCapture(t *testing.T) {
	s := captureOf(t,
		`>{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`<{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"capabilities":{"tools":{},"logging":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"2"}}}}`,
	)
	out, _ := serveLines(t, s, Options{},
		`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if !strings.HasPrefix(out[0], `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","supportedVersions":["2026-07-28",`) {
		t.Errorf("discover: %s", out[0])
	}
	for asked, want := range map[string]string{"2025-06-18": "2025-06-18", "2024-11-05": "2025-11-25"} {
		out, _ = serveLines(t, s, Options{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		if w := `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"logging":{},"tools":{}},"protocolVersion":"` + want + `","serverInfo":{"name":"m","version":"2"}}}`; out[0] != w {
			t.Errorf("initialize %s: %s\nwant %s", asked, out[0], w)
		}
	}
}
