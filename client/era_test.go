package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

var modernFixture = fixtureArgs{extra: []string{"--era", "modern"}}

// elicit declares elicitation (no Handler: Options.Inputs answers).
var elicit = ServerRequests{Elicitation: true}

// sentRequests returns the frames sonde wrote that are requests.
func (s *session) sentRequests() []*FrameInfo {
	var out []*FrameInfo
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Kind == jsonrpc.KindRequest {
			out = append(out, f)
		}
	}
	return out
}

// reqEvents returns the request events of id.
func (s *session) reqEvents(id int64) []*ReqInfo {
	var out []*ReqInfo
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.ID == jsonrpc.Int(id) {
			out = append(out, ev.Req)
		}
	}
	return out
}

func TestParseEra(t *testing.T) {
	for _, e := range Eras {
		if got, err := ParseEra(string(e)); err != nil || got != e {
			t.Errorf("ParseEra(%q) = %q, %v", e, got, err)
		}
	}
	if _, err := ParseEra("2026"); err == nil || !strings.Contains(err.Error(), "legacy, modern or auto") {
		t.Errorf("ParseEra(2026) = %v", err)
	}
	if New(Options{}).Era() != EraLegacy {
		t.Error("the default era is not legacy")
	}
}

func TestModernSession(t *testing.T) {
	s := start(t, Options{Era: EraModern}, modernFixture)
	res, err := s.c.Initialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != mcp.ModernVersion || res.ServerInfo.Name != "sonde-fixture" || !strings.Contains(res.Instructions, "modern era") {
		t.Errorf("result = %+v", res)
	}
	if s.c.Era() != EraModern || s.c.Discovered() == nil || s.c.Discovered().SupportedVersions[0] != mcp.ModernVersion {
		t.Errorf("era %s, discovered %+v", s.c.Era(), s.c.Discovered())
	}
	tools, err := s.c.ListTools(context.Background())
	if err != nil || len(tools) != 9 {
		t.Fatalf("tools/list: %d tools, %v", len(tools), err)
	}
	if _, _, err := s.c.CallTool(context.Background(), "echo", echoArgs("hi", 0), CallOptions{}); err != nil {
		t.Fatal(err)
	}
	// The events reach the test's recorder a little after the calls
	// return: wait for the three requests' frames.
	for deadline := time.Now().Add(10 * time.Second); len(s.sentRequests()) < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	// ping is gone in the modern era: refused before anything is written.
	before := len(s.sentRequests())
	if err := s.c.Ping(context.Background()); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "not part of the modern era") {
		t.Errorf("ping: %v", err)
	}
	reqs := s.sentRequests()
	if len(reqs) != before {
		t.Errorf("ping was written")
	}
	methods := []string{}
	for _, f := range reqs {
		methods = append(methods, f.Msg.Method)
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(jsonParams(t, f.Raw), &p); err != nil {
			t.Fatal(err)
		}
		if string(p.Meta[mcp.MetaProtocolVersion]) != `"`+mcp.ModernVersion+`"` || string(p.Meta[mcp.MetaClientCapabilities]) != "{}" ||
			!strings.Contains(string(p.Meta[mcp.MetaClientInfo]), `"sonde"`) {
			t.Errorf("%s: _meta = %v", f.Msg.Method, p.Meta)
		}
	}
	if strings.Join(methods, ",") != "server/discover,tools/list,tools/call" {
		t.Errorf("requests sent: %v (no initialize, no notifications/initialized expected)", methods)
	}
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == mcp.MethodInitialized {
			t.Error("notifications/initialized sent in the modern era")
		}
	}
}

// jsonParams returns the params of a request line.
func jsonParams(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Params
}

func TestModernInputRequiredRetry(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	inputs := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		asked = append(asked, method+" "+string(params))
		mu.Unlock()
		return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
	}
	s := start(t, Options{Era: EraModern, ServerRequests: elicit, Inputs: inputs}, modernFixture)
	s.init()
	call := s.c.GoTool(context.Background(), "confirm", json.RawMessage(`{"message":"Ship it?"}`), CallOptions{})
	raw, err := call.Wait()
	if err != nil {
		t.Fatal(err)
	}
	res, _ := ToolResult("confirm", raw)
	if len(res.Content) != 1 || res.Content[0].Text != "confirmed" {
		t.Errorf("result %s", raw)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "elicitation/create ") || !strings.Contains(asked[0], "Ship it?") {
		t.Errorf("inputs asked: %v", asked)
	}
	first, _ := call.ID.Int64()
	s.waitFor("the retry's outcome", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.ID == jsonrpc.Int(first+1) && ev.Req.State == StateResolved
	})
	if evs := s.reqEvents(first); len(evs) == 0 || evs[len(evs)-1].State != StateRetried {
		t.Fatalf("id %d: %+v, want it to end retried", first, evs)
	}
	retry := s.reqEvents(first + 1)
	if len(retry) < 3 || retry[0].State != StateQueued || retry[0].RetryOf != call.ID || retry[len(retry)-1].State != StateResolved {
		t.Fatalf("id %d: %+v, want a retry of %d that resolves", first+1, retry, first)
	}
	// The retry carries the answer, the exact requestState, and _meta again.
	reqs := s.sentRequests()
	last := string(reqs[len(reqs)-1].Raw)
	for _, want := range []string{`"inputResponses":{"confirm":{"action":"accept"`, `"requestState":"sonde-fixture:confirm:`, mcp.MetaProtocolVersion, `"progressToken":` + jsonrpc.Int(first+1).String()} {
		if !strings.Contains(last, want) {
			t.Errorf("retry %s lacks %s", last, want)
		}
	}
	ir := s.waitFor("the input_required frame", isFrame(VerdictResolved, "input required for id"))
	if !ir.Frame.InputRequired || ir.Frame.VerdictInDetail {
		t.Errorf("input_required frame: InputRequired %v VerdictInDetail %v, want true false", ir.Frame.InputRequired, ir.Frame.VerdictInDetail)
	}
	done := s.waitFor("the retry's frame", isFrame(VerdictResolved, "resolved "+idText(first+1)+" after"))
	if done.Frame.InputRequired || !done.Frame.VerdictInDetail || !strings.HasPrefix(done.Frame.DetailAfterVerdict(), idText(first+1)+" after ") {
		t.Errorf("retry's frame: InputRequired %v VerdictInDetail %v, after the verdict %q", done.Frame.InputRequired, done.Frame.VerdictInDetail, done.Frame.DetailAfterVerdict())
	}
	if st := s.c.Stats(); st.Retried != 1 || st.Resolved != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestModernInputRequiredFailures(t *testing.T) {
	t.Run("no capability", func(t *testing.T) {
		s := start(t, Options{Era: EraModern}, modernFixture)
		s.init()
		_, _, err := s.c.CallTool(context.Background(), "confirm", nil, CallOptions{})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRemote || e.RPC.Code != mcp.CodeMissingRequiredClientCapability {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("no answer", func(t *testing.T) {
		s := start(t, Options{Era: EraModern, ServerRequests: elicit}, modernFixture)
		s.init()
		_, _, err := s.c.CallTool(context.Background(), "confirm", nil, CallOptions{})
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "sonde cannot answer") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown resultType", func(t *testing.T) {
		s := start(t, Options{Era: EraModern, ServerRequests: elicit}, modernFixture)
		s.init()
		_, _, err := s.c.CallTool(context.Background(), "confirm", json.RawMessage(`{"result_type":"partial"}`), CallOptions{})
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `unknown resultType "partial"`) {
			t.Errorf("err = %v", err)
		}
		s.waitFor("an invalid frame", isFrame(VerdictInvalid, `resultType "partial" is neither complete nor input_required`))
	})
	t.Run("resultType task without the tasks extension", func(t *testing.T) {
		s := start(t, Options{Era: EraModern, ServerRequests: elicit}, modernFixture)
		s.init()
		_, _, err := s.c.CallTool(context.Background(), "confirm", json.RawMessage(`{"result_type":"task"}`), CallOptions{})
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `unknown resultType "task" (it belongs to the tasks extension (io.modelcontextprotocol/tasks), which sonde does not declare`) {
			t.Errorf("err = %v", err)
		}
	})
	for _, tc := range []struct {
		name  string
		close bool
		want  *Error
	}{{"cancel while answering", false, ErrAborted}, {"close while answering", true, ErrClosed}} {
		t.Run(tc.name, func(t *testing.T) {
			asking := make(chan struct{})
			inputs := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				close(asking)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			s := start(t, Options{Era: EraModern, ServerRequests: elicit, Inputs: inputs}, modernFixture)
			s.init()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			call := s.c.GoTool(ctx, "confirm", nil, CallOptions{})
			<-asking
			if tc.close {
				s.c.Close()
			} else {
				cancel()
			}
			if _, err := call.Wait(); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			s.waitFor("the note", func(ev Event) bool { return ev.Kind == EvNote && strings.Contains(ev.Note, "not retried") })
		})
	}
}

func TestAutoEra(t *testing.T) {
	t.Run("modern server", func(t *testing.T) {
		s := start(t, Options{Era: EraAuto}, modernFixture)
		res, err := s.c.Initialize(context.Background())
		if err != nil || res.ProtocolVersion != mcp.ModernVersion || s.c.Era() != EraModern {
			t.Fatalf("%+v %v era %s", res, err, s.c.Era())
		}
		s.waitFor("the note", func(ev Event) bool { return ev.Kind == EvNote && strings.Contains(ev.Note, "speaking the modern era") })
		if _, err := s.c.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("legacy server", func(t *testing.T) {
		s := start(t, Options{Era: EraAuto}, fixtureArgs{})
		res, err := s.c.Initialize(context.Background())
		if err != nil || res.ProtocolVersion != mcp.LatestVersion || s.c.Era() != EraLegacy {
			t.Fatalf("%+v %v era %s", res, err, s.c.Era())
		}
		s.waitFor("the note", func(ev Event) bool {
			return ev.Kind == EvNote && strings.Contains(ev.Note, "-32601") && strings.Contains(ev.Note, "falling back to initialize")
		})
		var methods []string
		for _, f := range s.sentRequests() {
			methods = append(methods, f.Msg.Method)
		}
		if strings.Join(methods, ",") != "server/discover,initialize" {
			t.Errorf("sent %v", methods)
		}
		// Legacy requests carry no modern _meta, and ping works.
		if err := s.c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		reqs := s.sentRequests()
		if strings.Contains(string(reqs[len(reqs)-1].Raw), mcp.MetaProtocolVersion) {
			t.Errorf("legacy request with modern _meta: %s", reqs[len(reqs)-1].Raw)
		}
	})
	t.Run("silent server", func(t *testing.T) {
		// A real process that reads everything and answers nothing: the
		// discover times out, and auto falls back to initialize.
		env, _ := transport.BuildEnv(os.Environ(), nil, nil)
		s := connectSession(t, Options{Era: EraAuto, Timeout: 300 * time.Millisecond},
			transport.StdioConfig{Argv: []string{"sh", "-c", "cat >/dev/null"}, Env: env, KillAfter: 300 * time.Millisecond})
		_, err := s.c.Initialize(context.Background())
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "initialize") {
			t.Errorf("err = %v, want initialize to time out after the fallback", err)
		}
		s.waitFor("the note", func(ev Event) bool {
			return ev.Kind == EvNote && strings.Contains(ev.Note, "MCP_TIMEOUT") && strings.Contains(ev.Note, "falling back")
		})
	})
	t.Run("modern only, legacy era", func(t *testing.T) {
		s := start(t, Options{}, modernFixture)
		_, err := s.c.Initialize(context.Background())
		if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "only the modern era") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestModernServerRequest: a modern server must not send requests, and a
// modern client must not answer: each is an invalid frame, unanswered.
func TestModernServerRequest(t *testing.T) {
	s := start(t, Options{Era: EraModern}, fixtureArgs{faults: []string{"server-ping"}, extra: []string{"--era", "modern"}})
	s.init()
	s.waitUntil("two invalid frames", func([]Event) bool { return len(s.frames(VerdictInvalid)) == 2 })
	for _, f := range s.frames(VerdictInvalid) {
		if !strings.Contains(f.Detail, "a modern server must not send requests") {
			t.Errorf("detail %q", f.Detail)
		}
	}
	// A later request still works, and nothing answered the server.
	if _, err := s.c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Kind == jsonrpc.KindResponse {
			t.Errorf("sonde answered a modern server's request: %s", f.Raw)
		}
	}
	if strings.Contains(stderrText(s.snapshot()), "fixture: response id=") {
		t.Error("the fixture logged an answer")
	}
}

// serveFixtureHTTP runs the fixture's HTTP mode in-process on a real
// loopback socket and returns its /mcp URL.
func serveFixtureHTTP(t *testing.T, args ...string) string {
	t.Helper()
	return fixturetest.ServeHTTP(t, args...) + "/mcp"
}

// TestModernOverHTTP: the modern era over Streamable HTTP, input_required
// retry included, against the fixture's HTTP mode; and auto falling back to
// initialize against its legacy HTTP mode.
func TestModernOverHTTP(t *testing.T) {
	accept := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
	}
	t.Run("modern", func(t *testing.T) {
		url := serveFixtureHTTP(t, "--era", "modern")
		s := dialSession(t, Options{Era: EraModern, ServerRequests: elicit, Inputs: accept}, HTTP(transport.HTTPConfig{URL: url}))
		res, err := s.c.Initialize(context.Background())
		if err != nil || res.ProtocolVersion != mcp.ModernVersion {
			t.Fatalf("%+v %v", res, err)
		}
		r, raw, err := s.c.CallTool(context.Background(), "confirm", nil, CallOptions{})
		if err != nil || len(r.Content) != 1 || r.Content[0].Text != "confirmed" {
			t.Fatalf("confirm: %s %v", raw, err)
		}
		if s.sawHTTP(func(h *transport.HTTPEvent) bool { return h.Method == "GET" || h.Method == "DELETE" }) {
			t.Error("a GET or DELETE in a modern session")
		}
		// The retry (id 3) went out with the headers of its own.
		s.waitFor("the retry's POST", func(ev Event) bool {
			if ev.Kind != EvHTTP || ev.HTTP.Method != "POST" || ev.HTTP.ReqID != jsonrpc.Int(3) {
				return false
			}
			h := strings.Join(ev.HTTP.Header, "\n")
			return ev.HTTP.Status == 200 && strings.Contains(h, "> Mcp-Name: confirm") && strings.Contains(h, "> MCP-Protocol-Version: "+mcp.ModernVersion)
		})
	})
	t.Run("auto, legacy server", func(t *testing.T) {
		s := dialSession(t, Options{Era: EraAuto}, HTTP(transport.HTTPConfig{URL: serveFixtureHTTP(t)}))
		res, err := s.c.Initialize(context.Background())
		if err != nil || s.c.Era() != EraLegacy || res.ProtocolVersion != mcp.LatestVersion {
			t.Fatalf("%+v %v era %s", res, err, s.c.Era())
		}
		s.waitFor("the fallback note", func(ev Event) bool {
			return ev.Kind == EvNote && strings.Contains(ev.Note, "MCP_HTTP") && strings.Contains(ev.Note, "falling back to initialize")
		})
		if _, err := s.c.ListTools(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestModernInputFromHandler: input requests are answered as legacy server
// requests are: by ServerRequests.Handler (the headless replies), roots
// from the roots; a Handler's refusal cannot be carried and fails the call.
func TestModernInputFromHandler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler Handler
		want    string
		errWant string
	}{
		{"accept", func(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
			return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil, true
		}, "confirmed", ""},
		{"decline", func(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
			return json.RawMessage(`{"action":"decline"}`), nil, true
		}, `not confirmed: the client answered {"action":"decline"}`, ""},
		{"refuse", func(r ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
			return nil, &jsonrpc.Error{Code: -32600, Message: "no"}, true
		}, "", "which an input_required retry cannot carry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Options{Era: EraModern, ServerRequests: ServerRequests{Elicitation: true, Handler: tc.handler}}, modernFixture)
			s.init()
			r, raw, err := s.c.CallTool(context.Background(), "confirm", nil, CallOptions{})
			if tc.errWant != "" {
				if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || len(r.Content) != 1 || r.Content[0].Text != tc.want {
				t.Fatalf("%s %v", raw, err)
			}
		})
	}
}

// With ServerRequests.Interactive (the UI), an input request of an
// input_required result waits as a request from the server until Respond
// answers it, as a legacy server's elicitation would; a refusal ends the
// call with MCP_ABORTED.
func TestModernInputRequiredInteractive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(c *Client, id jsonrpc.ID) error
		check  func(t *testing.T, raw json.RawMessage, err error)
	}{
		{"accepted", func(c *Client, id jsonrpc.ID) error {
			return c.Respond(id, json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil)
		}, func(t *testing.T, raw json.RawMessage, err error) {
			res, _ := ToolResult("confirm", raw)
			if err != nil || res == nil || len(res.Content) != 1 || res.Content[0].Text != "confirmed" {
				t.Fatalf("%s %v", raw, err)
			}
		}},
		{"refused", func(c *Client, id jsonrpc.ID) error {
			return c.Respond(id, nil, &jsonrpc.Error{Code: -1, Message: "user said no"})
		}, func(t *testing.T, raw json.RawMessage, err error) {
			if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "user said no") {
				t.Fatalf("%s %v", raw, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sr := elicit
			sr.Interactive = true
			s := start(t, Options{Era: EraModern, ServerRequests: sr}, modernFixture)
			s.init()
			call := s.c.GoTool(context.Background(), "confirm", json.RawMessage(`{"message":"Ship it?"}`), CallOptions{})
			var asked *ReqInfo
			s.waitFor("the input request, waiting", func(ev Event) bool {
				if ev.Kind == EvRequest && ev.Req.Dir == transport.In && ev.Req.State == StateReceived {
					asked = ev.Req
					return true
				}
				return false
			})
			id, _ := asked.ID.Str()
			if !strings.HasPrefix(id, "input:") || asked.Method != "elicitation/create" || !strings.Contains(string(asked.Params), "Ship it?") {
				t.Fatalf("waiting request %+v", asked)
			}
			if w := s.c.Waiting(); len(w) != 1 || w[0].ID != asked.ID {
				t.Fatalf("Waiting() = %+v", w)
			}
			if err := tc.answer(s.c, asked.ID); err != nil {
				t.Fatal(err)
			}
			raw, err := call.Wait()
			tc.check(t, raw, err)
			if err := s.c.Respond(asked.ID, nil, nil); !errors.Is(err, ErrProtocol) {
				t.Errorf("a second answer: %v", err)
			}
			if n := len(s.c.Waiting()); n != 0 {
				t.Errorf("%d requests still waiting", n)
			}
		})
	}
}

// The modern era has no notifications/roots/list_changed: SetRoots keeps
// the roots for the next input request and says so in a note.
func TestModernSetRootsSendsNothing(t *testing.T) {
	s := start(t, Options{Era: EraModern, ServerRequests: ServerRequests{Roots: true}}, modernFixture)
	s.init()
	if err := s.c.SetRoots([]mcp.Root{{URI: "file:///tmp", Name: "tmp"}}); err != nil {
		t.Fatal(err)
	}
	s.waitFor("the note", func(ev Event) bool {
		return ev.Kind == EvNote && strings.Contains(ev.Note, "no notifications/roots/list_changed")
	})
	for _, f := range s.frames(VerdictSent) {
		if strings.Contains(string(f.Raw), "roots/list_changed") {
			t.Fatalf("sent %s", f.Raw)
		}
	}
	if got := s.c.Roots(); len(got) != 1 || got[0].URI != "file:///tmp" {
		t.Fatalf("roots %+v", got)
	}
}
