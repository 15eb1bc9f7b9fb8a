package lint

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

func TestMain(m *testing.M) { capturetest.Main(m) }

// lintAll runs a fresh linter over evs and returns copies of its findings.
func lintAll(evs []client.Event) []Finding {
	l := New()
	var out []Finding
	for _, ev := range evs {
		out = append(out, l.Check(ev)...)
	}
	return out
}

// names returns the distinct rule names of fs, sorted.
func names(fs []Finding) []string {
	var n []string
	for _, f := range fs {
		if !slices.Contains(n, f.Rule) {
			n = append(n, f.Rule)
		}
	}
	slices.Sort(n)
	return n
}

// waitStat polls the client's counters until ok (the fault's extra frames
// have arrived) or a generous bound passes.
func waitStat(t *testing.T, c *client.Client, what string, ok func(client.Stats) bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if ok(c.Stats()) {
			return
		}
	}
	t.Fatalf("no %s frame arrived", what)
}

func initialize(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
}

func echo(ctx context.Context, c *client.Client, o client.CallOptions) error {
	_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), o)
	return err
}

// cleanSession exercises the fixture the way a well-behaved session does:
// concurrent calls answered out of order, progress, a JSON-RPC error, a
// tool error, a ping and tools/list.
func cleanSession(t *testing.T) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		initialize(t, ctx, c)
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		slow := c.GoTool(ctx, "echo", json.RawMessage(`{"value":"slow","delay_ms":60}`), client.CallOptions{})
		if err := echo(ctx, c, client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		<-slow.Done()
		if _, _, err := c.CallTool(ctx, "progress", json.RawMessage(`{"steps":3,"interval_ms":5}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "fail", nil, client.CallOptions{}); !errors.Is(err, client.ErrRemote) {
			t.Fatalf("fail: %v", err)
		}
		if _, _, err := c.CallTool(ctx, "tool-error", nil, client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFixtureFaults lints captures of real sessions against the fixture:
// each fault shows exactly its rule; a clean session shows nothing.
func TestFixtureFaults(t *testing.T) {
	cases := []struct {
		name    string
		o       capturetest.Options
		run     func(t *testing.T) func(context.Context, *client.Client)
		want    []string
		verdict client.Verdict // of every frame found, when set
	}{
		{name: "clean", run: cleanSession},
		{name: "clean-http", o: capturetest.Options{HTTP: true}, run: cleanSession},
		{name: "server-ping", o: capturetest.Options{Fixture: []string{"--fault", "server-ping"}}, run: func(t *testing.T) func(context.Context, *client.Client) {
			return func(ctx context.Context, c *client.Client) {
				initialize(t, ctx, c)
				waitStat(t, c, "server request", func(s client.Stats) bool { return s.ServerReqs >= 2 })
				if err := echo(ctx, c, client.CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}, want: []string{RuleUndeclared}, verdict: client.VerdictUndeclared}, // its ping is fine; sampling was not declared
		{name: "stdout-noise", o: capturetest.Options{Fixture: []string{"--fault", "stdout-noise"}}, run: calls(1), want: []string{RuleNotJSON}, verdict: client.VerdictMalformed},
		{name: "exit-mid-call", o: capturetest.Options{Fixture: []string{"--fault", "exit-mid-call"}}, run: callWant(client.CallOptions{}, client.ErrProcessExit, ""), want: []string{RuleNotJSON}, verdict: client.VerdictMalformed},
		{name: "non-object-json", o: capturetest.Options{Fixture: []string{"--fault", "non-object-json"}}, run: calls(1), want: []string{RuleNotObject}, verdict: client.VerdictMalformed},
		{name: "unknown-id", o: capturetest.Options{Fixture: []string{"--fault", "unknown-id"}}, run: calls(2), want: []string{RuleUnknownID}, verdict: client.VerdictUnknown},
		{name: "string-id", o: capturetest.Options{Fixture: []string{"--fault", "string-id"}}, run: callWant(client.CallOptions{Timeout: 300 * time.Millisecond}, client.ErrTimeout, ""), want: []string{RuleUnknownID}, verdict: client.VerdictUnknown},
		// The response comes 1.5s late, the call times out after 50ms: a
		// gap no loaded machine closes (150ms once lost to a timer firing
		// late under -race).
		{name: "late-response", o: capturetest.Options{Fixture: []string{"--fault", "late-response", "--late-ms", "1500"}}, run: callWant(client.CallOptions{Timeout: 50 * time.Millisecond}, client.ErrTimeout, "late"), want: []string{RuleLateResponse}, verdict: client.VerdictLate},
		{name: "duplicate-response", o: capturetest.Options{Fixture: []string{"--fault", "duplicate-response"}}, run: callWant(client.CallOptions{}, nil, "duplicate"), want: []string{RuleDuplicateResponse}, verdict: client.VerdictDuplicate},
		{name: "result-and-error", o: capturetest.Options{Fixture: []string{"--fault", "result-and-error"}}, run: callWant(client.CallOptions{}, client.ErrProtocol, ""), want: []string{RuleResultAndError}, verdict: client.VerdictInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := capturetest.Record(t, tc.o, tc.run(t))
			evs := capturetest.Events(t, path)
			fs := lintAll(evs)
			if got := names(fs); !slices.Equal(got, tc.want) {
				for _, f := range fs {
					t.Logf("%s seq %d: %s", f.Rule, f.Seq, f.Detail)
				}
				t.Fatalf("rules found %v, want %v", got, tc.want)
			}
			bySeq := map[uint64]client.Event{}
			versionHeaders := 0
			for _, ev := range evs {
				bySeq[ev.Seq] = ev
				if ev.HTTP != nil && strings.Contains(strings.Join(ev.HTTP.Header, "\n"), "> MCP-Protocol-Version: ") {
					versionHeaders++
				}
			}
			if tc.o.HTTP && versionHeaders < 3 {
				t.Errorf("%d exchanges carried MCP-Protocol-Version: the version rule was not exercised", versionHeaders)
			}
			for _, f := range fs {
				ev := bySeq[f.Seq]
				if ev.Frame == nil || string(ev.Frame.Raw) != string(f.Raw) || f.Dir != client.In || f.Time.IsZero() {
					t.Errorf("%s: finding at seq %d does not point at its frame", f.Rule, f.Seq)
					continue
				}
				if tc.verdict != "" && ev.Frame.Verdict != tc.verdict {
					t.Errorf("%s: frame %d has verdict %s, want %s", f.Rule, f.Seq, ev.Frame.Verdict, tc.verdict)
				}
				if f.Detail == "" {
					t.Errorf("%s: no detail", f.Rule)
				}
			}
		})
	}
}

// calls initializes and makes n echo calls.
// callWant initializes, makes one echo call with o that must fail with
// want (nil: succeed), then, when late is "late" or "duplicate", waits for
// such a frame.
func callWant(o client.CallOptions, want error, late string) func(t *testing.T) func(context.Context, *client.Client) {
	return func(t *testing.T) func(context.Context, *client.Client) {
		return func(ctx context.Context, c *client.Client) {
			initialize(t, ctx, c)
			if err := echo(ctx, c, o); !errors.Is(err, want) {
				t.Fatalf("%v, want %v", err, want)
			}
			switch late {
			case "late":
				waitStat(t, c, late, func(s client.Stats) bool { return s.Late >= 1 })
			case "duplicate":
				waitStat(t, c, late, func(s client.Stats) bool { return s.Duplicate >= 1 })
			}
		}
	}
}

func calls(n int) func(t *testing.T) func(context.Context, *client.Client) {
	return func(t *testing.T) func(context.Context, *client.Client) {
		return func(ctx context.Context, c *client.Client) {
			initialize(t, ctx, c)
			for range n {
				if err := echo(ctx, c, client.CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// fixtureRules are the rules TestFixtureFaults shows with a fault.
var fixtureRules = []string{RuleNotJSON, RuleNotObject, RuleUnknownID, RuleLateResponse, RuleDuplicateResponse, RuleResultAndError, RuleUndeclared,
	// TestSpecFaults
	RuleStructuredText, RuleOutputSchema, RuleResultType, RuleUnnegotiatedExt, RuleMalformedExt, RuleContentType,
	// TestDPoPDowngradeLive
	RuleDPoPDowngrade}

// TestHandWritten lints the small hand-written captures of
// testdata/captures/lint, one per rule the fixture cannot show (sonde's
// client never breaks them, and the fixture's faults do not either): each
// shows exactly the rule it is named after, at the frame its README says.
func TestHandWritten(t *testing.T) {
	files, err := filepath.Glob("../testdata/captures/lint/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	readme, err := os.ReadFile("../testdata/captures/lint/README.md")
	if err != nil {
		t.Fatal(err)
	}
	covered := slices.Clone(fixtureRules)
	for _, file := range files {
		rule := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(rule, func(t *testing.T) {
			if _, ok := Lookup(rule); !ok {
				t.Fatalf("%s is named after no rule", file)
			}
			if !strings.Contains(string(readme), "`"+rule+".jsonl`") {
				t.Errorf("README.md does not describe %s.jsonl", rule)
			}
			fs := lintAll(capturetest.Events(t, file))
			if got := names(fs); !slices.Equal(got, []string{rule}) || len(fs) != 1 {
				t.Fatalf("findings %v, want one %s", fs, rule)
			}
			if fs[0].Seq == 0 || len(fs[0].Raw) == 0 {
				t.Errorf("finding %+v has no frame", fs[0])
			}
		})
		covered = append(covered, rule)
	}
	for _, r := range Rules() {
		if !slices.Contains(covered, r.Name) {
			t.Errorf("rule %s is shown by no fixture fault and no sample", r.Name)
		}
	}
}

// TestMidSession: a stream that does not start at the session's start (a
// recording started with R, missed events) does not make the handshake
// rules fire.
func TestMidSession(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/lint/call-before-initialized.jsonl")
	if fs := lintAll(evs[3:]); len(fs) != 0 {
		t.Errorf("mid-session stream: %v", fs)
	}
	// The same stream from its start does show it.
	if fs := lintAll(evs); len(fs) != 1 {
		t.Errorf("whole stream: %v", fs)
	}
}

// TestGap: events missing from the stream (a subscriber that fell behind)
// make the rules that need the past stay silent: here the two pings with
// one id are not reported when the events between them are missing (the
// answer to the first could be among them).
func TestGap(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/lint/id-reused.jsonl")
	if fs := lintAll(evs); len(fs) != 1 {
		t.Fatalf("whole stream: %v", fs)
	}
	gapped := append(slices.Clone(evs[:5]), evs[5:]...)
	gapped[5].Seq += 2 // events 6 and 7 were missed
	for i := 6; i < len(gapped); i++ {
		gapped[i].Seq += 2
	}
	if fs := lintAll(gapped); len(fs) != 0 {
		t.Errorf("with a gap: %v", fs)
	}
	// A late response is still reported: the client judged it.
	late := capturetest.Events(t, "../testdata/captures/out-of-order-late-crash.jsonl")
	for i := range late {
		late[i].Seq += uint64(i) // a gap before every event
	}
	if got := names(lintAll(late)); !slices.Contains(got, RuleLateResponse) {
		t.Errorf("gaps everywhere: %v", got)
	}
}

// TestRestartResets: a second process start begins a new session, whose
// ids and handshake are its own.
func TestRestartResets(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/lint/progress-after-response.jsonl")
	l := New()
	for _, ev := range evs[:len(evs)-1] { // all but the stray progress
		l.Check(ev)
	}
	for _, ev := range evs[:5] { // a new process: start, initialize, result, initialized, tools/call
		if fs := l.Check(ev); len(fs) != 0 {
			t.Fatalf("after a restart, seq %d: %v", ev.Seq, fs)
		}
	}
}

func TestRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/lint.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(doc), "### `"+r.Name+"`") {
			t.Errorf("docs/lint.md has no section for %s", r.Name)
		}
		if r.Summary == "" || r.Spec == "" || (r.Level != Must && r.Level != Should) {
			t.Errorf("rule %s is incomplete: %+v", r.Name, r)
		}
	}
}

// FuzzCheck feeds arbitrary lines as frames in both directions: the
// linter never panics, and every finding names a known rule and its frame.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":2,"progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","requestState":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"a/b":{},"c":1}}}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":"s","capabilities":{"extensions":[]},"structuredContent":{"x":1},"content":[]}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t","outputSchema":{"type":"object","required":["x"]}}],"resultType":7}}`,
		"> Accept: text/plain\n> Content-Type: application/json\n> MCP-Protocol-Version: 1\n> Mcp-Method: x",
		`[1,2]`, `noise`, ``,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, in bool) {
		l := New()
		start := client.Event{Seq: 1, Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart}}
		l.Check(start)
		dir := client.Out
		if in {
			dir = client.In
		}
		for i, d := range []client.Direction{dir, client.In, client.Out} {
			msg, err := jsonrpc.Decode(line)
			ev := client.Event{Seq: uint64(i + 2), Kind: client.EvFrame, Frame: &client.FrameInfo{
				Frame: client.Frame{Dir: d, Raw: line, Msg: msg, Err: err}, Verdict: client.VerdictUnknown,
			}}
			for _, fd := range l.Check(ev) {
				if _, ok := Lookup(fd.Rule); !ok || fd.Seq != ev.Seq || string(fd.Raw) != string(line) {
					t.Fatalf("bad finding %+v", fd)
				}
			}
		}
		// The same bytes as the header lines of an exchange of that request.
		ex := client.Event{Seq: 5, Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", Status: 200, ReqID: jsonrpc.Int(3),
			Header: strings.Split(string(line), "\n")}}
		for _, fd := range l.Check(ex) {
			if _, ok := Lookup(fd.Rule); !ok || fd.Seq != 5 || fd.Detail == "" {
				t.Fatalf("bad finding %+v", fd)
			}
		}
	})
}

// BenchmarkCheck runs the linter over 100k events of a real session
// repeated: "faulty" is the sample with noise, out-of-order answers, a late
// answer and a crash (a fifth of its frames break a rule); "clean" is six
// concurrent calls, one of which times out.
func BenchmarkCheck(b *testing.B) {
	for name, path := range map[string]string{
		"faulty": "../testdata/captures/out-of-order-late-crash.jsonl",
		"clean":  "../testdata/captures/concurrent-calls.jsonl",
	} {
		b.Run(name, func(b *testing.B) {
			base := capturetest.Events(b, path)
			evs := make([]client.Event, 100_000)
			for i := range evs {
				evs[i] = base[i%len(base)]
			}
			b.ReportAllocs()
			for b.Loop() {
				l := New()
				for _, ev := range evs {
					l.Check(ev)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
		})
	}
}

// TestHeldNotLate: a late response to a request a breakpoint held (its
// hold is in the recording) is not the server's lateness: no
// late-response; the same stream without the hold shows it.
func TestHeldNotLate(t *testing.T) {
	evs := capturetest.Events(t, "../testdata/captures/out-of-order-late-crash.jsonl")
	fs := lintAll(evs)
	i := slices.IndexFunc(fs, func(f Finding) bool { return f.Rule == RuleLateResponse })
	if i < 0 {
		t.Fatalf("no late-response to start with: %v", names(fs))
	}
	id := fs[i].ID
	var held []client.Event
	for _, ev := range evs {
		if ev.Kind == client.EvFrame && ev.Frame.Dir == client.Out && ev.Frame.Msg.ID == id {
			held = append(held, ev, client.Event{Kind: client.EvNote, Time: ev.Time, Note: "breakpoint 1 held h1",
				Hold: &client.Hold{Handle: "h1", Breakpoint: 1, Action: client.HoldHeld, Dir: client.Out, ID: id}})
			continue
		}
		held = append(held, ev)
	}
	for j := range held {
		held[j].Seq = uint64(j + 1)
	}
	if got := names(lintAll(held)); slices.Contains(got, RuleLateResponse) {
		t.Errorf("a held request's late answer is reported: %v", got)
	}
}
