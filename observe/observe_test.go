package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// metricSink is a metric exporter that keeps what it is given.
type metricSink struct {
	mu  sync.Mutex
	got []metricdata.ResourceMetrics
}

func (s *metricSink) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (s *metricSink) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (s *metricSink) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, *rm)
	return nil
}
func (s *metricSink) ForceFlush(context.Context) error { return nil }
func (s *metricSink) Shutdown(context.Context) error   { return nil }

// histogram returns the data points of the histogram name.
func (s *metricSink) histogram(t *testing.T, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rm := range s.got {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name == name {
					if m.Unit != "s" {
						t.Errorf("%s: unit %q", name, m.Unit)
					}
					return m.Data.(metricdata.Histogram[float64]).DataPoints
				}
			}
		}
	}
	return nil
}

// keep is the in-memory exporter without the reset of its Shutdown.
type keep struct{ *tracetest.InMemoryExporter }

func (keep) Shutdown(context.Context) error { return nil }

// result is what a followed session exported.
type result struct {
	spans   tracetest.SpanStubs
	metrics *metricSink
	stats   Stats
	events  []client.Event
}

// follow runs fn on a client of dial, exported through the in-memory
// exporters, and returns what came out once the session closed.
func follow(t *testing.T, opts client.Options, fo FoldOptions, dial client.Dialer, fn func(ctx context.Context, c *client.Client)) result {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	sink := &metricSink{}
	tel := NewWith(keep{exp}, sink, Config{ServiceName: "sonde-test"})
	opts.RequestMeta = NewInjector(fo.Parent).Meta
	c := client.New(opts)
	all := c.Subscribe(1 << 16)
	tel.Follow(c.Subscribe(DefaultBuffer), fo)
	if err := c.Connect(dial); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	fn(ctx, c)
	c.Close()
	var evs []client.Event
	for ev := range all.C {
		evs = append(evs, ev)
	}
	st := tel.Shutdown(ctx)
	return result{spans: exp.GetSpans(), metrics: sink, stats: st, events: evs}
}

// start connects c to the fixture (a real subprocess) and runs the
// handshake.
func start(tb testing.TB, c *client.Client) {
	tb.Helper()
	if err := c.Connect(stdio(tb)); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Initialize(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// stdio starts the fixture as a real subprocess.
func stdio(t testing.TB, args ...string) client.Dialer {
	t.Helper()
	return client.Stdio(capturetest.Stdio(t, args...))
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, a := range s.Attributes {
		m[a.Key] = a.Value
	}
	return m
}

// spanNamed returns the one span called name (failing on none or more).
func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans named %q among %q", len(found), name, names)
	}
	return found[0]
}

// want checks attributes: a nil value means the key must be absent.
func want(t *testing.T, s tracetest.SpanStub, kv map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, v := range kv {
		g, ok := got[attribute.Key(k)]
		switch {
		case v == nil && ok:
			t.Errorf("%s: %s = %v, want absent", s.Name, k, g.String())
		case v != nil && !ok:
			t.Errorf("%s: %s absent, want %v", s.Name, k, v)
		case v != nil && g.AsInterface() != v:
			t.Errorf("%s: %s = %#v, want %#v", s.Name, k, g.AsInterface(), v)
		}
	}
}

func hasEvent(s tracetest.SpanStub, name string) bool {
	for _, e := range s.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}

// sentMeta is the traceparent sonde put in the request of id.
func sentMeta(t *testing.T, evs []client.Event, id int64) trace.SpanContext {
	t.Helper()
	for _, ev := range evs {
		if ev.Kind == client.EvFrame && ev.Frame.Dir == client.Out && ev.Frame.Msg.Kind == jsonrpc.KindRequest && ev.Frame.Msg.ID == jsonrpc.Int(id) {
			p, ok := readParams(ev.Frame)
			if !ok {
				t.Fatal("params do not decode")
			}
			return p.Meta.context()
		}
	}
	t.Fatalf("no request %d", id)
	return trace.SpanContext{}
}

// TestStdioSession: a session with the fixture as a subprocess: names,
// kinds, the attributes of each outcome, the ids sent in _meta, events,
// and the histograms.
func TestStdioSession(t *testing.T) {
	r := follow(t, client.Options{Timeout: 2 * time.Second}, FoldOptions{}, stdio(t), func(ctx context.Context, c *client.Client) {
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"hi"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "fail", json.RawMessage(`{"message":"no luck"}`), client.CallOptions{}); !errors.Is(err, client.ErrRemote) {
			t.Fatalf("fail: %v", err)
		}
		if _, _, err := c.CallTool(ctx, "tool-error", nil, client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "progress", json.RawMessage(`{"steps":2,"interval_ms":10}`), client.CallOptions{ProgressToken: true}); err != nil {
			t.Fatal(err)
		}
		// Timed out, then answered late (400 ms after the deadline).
		_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"slow","delay_ms":800,"ignore_cancel":true}`), client.CallOptions{Timeout: 400 * time.Millisecond})
		if !errors.Is(err, client.ErrTimeout) {
			t.Fatalf("slow echo: %v", err)
		}
		time.Sleep(900 * time.Millisecond)
		cctx, cancel := context.WithCancel(ctx)
		call := c.GoTool(cctx, "echo", json.RawMessage(`{"value":"x","delay_ms":2000}`), client.CallOptions{})
		time.Sleep(50 * time.Millisecond)
		cancel()
		if _, err := call.Wait(); !errors.Is(err, client.ErrAborted) {
			t.Fatalf("cancelled echo: %v", err)
		}
	})
	init := spanNamed(t, r.spans, "initialize")
	if init.SpanKind != trace.SpanKindClient {
		t.Errorf("initialize: kind %v", init.SpanKind)
	}
	want(t, init, map[string]any{
		"mcp.method.name": "initialize", "jsonrpc.request.id": "1", "network.transport": "pipe",
		"mcp.protocol.version": "2025-11-25", "mcp.session.id": nil, "server.address": nil, "error.type": nil,
		"network.protocol.name": nil, "network.protocol.version": nil,
	})
	if sc := sentMeta(t, r.events, 1); sc.SpanID() != init.SpanContext.SpanID() || sc.TraceID() != init.SpanContext.TraceID() {
		t.Errorf("initialize: span %v, _meta sent %v", init.SpanContext, sc)
	}
	if init.Parent.IsValid() {
		t.Errorf("initialize has a parent %v without --traceparent", init.Parent)
	}
	spanNamed(t, r.spans, "tools/list")
	spanNamed(t, r.spans, "notifications/initialized")

	var echo, slow, cancelled tracetest.SpanStub
	for _, s := range r.spans {
		if s.Name != "tools/call echo" {
			continue
		}
		switch attrs(s)["error.type"].AsString() {
		case "":
			echo = s
		case ErrTypeTimeout:
			slow = s
		case ErrTypeCancelled:
			cancelled = s
		}
	}
	want(t, echo, map[string]any{"gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.arguments": nil, "gen_ai.tool.call.result": nil})
	if echo.Status.Code != codes.Unset || echo.SpanContext.TraceID() != init.SpanContext.TraceID() {
		t.Errorf("echo: status %v, trace %v (the session's is %v)", echo.Status, echo.SpanContext.TraceID(), init.SpanContext.TraceID())
	}
	fail := spanNamed(t, r.spans, "tools/call fail")
	want(t, fail, map[string]any{"error.type": "-32001", "rpc.response.status_code": "-32001"})
	if fail.Status.Code != codes.Error || fail.Status.Description != "no luck" {
		t.Errorf("fail: status %+v", fail.Status)
	}
	te := spanNamed(t, r.spans, "tools/call tool-error")
	want(t, te, map[string]any{"error.type": ErrTypeToolError, "rpc.response.status_code": nil})
	if te.Status.Code != codes.Error {
		t.Errorf("tool-error: status %+v", te.Status)
	}
	pr := spanNamed(t, r.spans, "tools/call progress")
	if n := len(pr.Events); n != 2 || pr.Events[0].Name != eventProgress {
		t.Errorf("progress: events %+v", pr.Events)
	}
	if slow.Name == "" || slow.Status.Code != codes.Error || !hasEvent(slow, eventLate) || !hasEvent(slow, eventCancel) {
		t.Errorf("timed-out echo: %+v", slow)
	}
	if cancelled.Name == "" || !hasEvent(cancelled, eventCancel) {
		t.Errorf("cancelled echo: %+v", cancelled)
	}
	if r.stats.Spans != uint64(len(r.spans)) || r.stats.Dropped != 0 || r.stats.Warning() != "" {
		t.Errorf("stats %+v for %d spans", r.stats, len(r.spans))
	}

	ops := r.metrics.histogram(t, "mcp.client.operation.duration")
	var calls uint64
	for _, dp := range ops {
		if len(dp.Bounds) != len(Buckets) || dp.Bounds[0] != 0.01 || dp.Bounds[len(dp.Bounds)-1] != 300 {
			t.Fatalf("buckets %v", dp.Bounds)
		}
		if v, ok := dp.Attributes.Value("mcp.method.name"); ok && v.AsString() == mcp.MethodToolsCall {
			calls += dp.Count
		}
		if _, ok := dp.Attributes.Value("jsonrpc.request.id"); ok {
			t.Error("the histogram has jsonrpc.request.id")
		}
	}
	if calls != 6 {
		t.Errorf("%d tools/call measured, want 6", calls)
	}
	sess := r.metrics.histogram(t, "mcp.client.session.duration")
	if len(sess) != 1 || sess[0].Count != 1 {
		t.Errorf("session duration: %+v", sess)
	}
}

// TestHTTPModern: a modern session over HTTP: input_required is one
// operation span with a child span per round; server.address/port and
// network attributes; never mcp.session.id; --traceparent parents it.
func TestHTTPModern(t *testing.T) {
	parent, err := ParseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x")
	if err != nil {
		t.Fatal(err)
	}
	url := fixturetest.ServeHTTP(t, "--era", "modern") + "/mcp"
	accept := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil
	}
	opts := client.Options{Era: client.EraModern, ServerRequests: client.ServerRequests{Elicitation: true}, Inputs: accept}
	r := follow(t, opts, FoldOptions{Parent: parent}, client.HTTP(transport.HTTPConfig{URL: url}), func(ctx context.Context, c *client.Client) {
		if _, _, err := c.CallTool(ctx, "confirm", nil, client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	var op tracetest.SpanStub
	var rounds []tracetest.SpanStub
	for _, s := range r.spans {
		if s.Name != "tools/call confirm" {
			continue
		}
		if _, ok := attrs(s)[attrRounds]; ok {
			op = s
		} else {
			rounds = append(rounds, s)
		}
	}
	if op.Name == "" || len(rounds) != 2 {
		t.Fatalf("operation %+v, rounds %d", op, len(rounds))
	}
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://"))
	want(t, op, map[string]any{
		"mcp.protocol.version": mcp.ModernVersion, "mcp.session.id": nil, "network.transport": "tcp",
		"network.protocol.name": "http", "server.address": host, "jsonrpc.request.id": "2", string(attrRounds): int64(2),
	})
	if p := attrs(op)["server.port"].AsInt64(); port == "" || p == 0 {
		t.Errorf("server.port %d", p)
	}
	if op.Parent.SpanID() != parent.SpanID() || op.SpanContext.TraceID() != parent.TraceID() {
		t.Errorf("operation: parent %v, want %v", op.Parent, parent)
	}
	for i, rs := range rounds {
		if rs.Parent.SpanID() != op.SpanContext.SpanID() {
			t.Errorf("round %d: parent %v, want the operation %v", i, rs.Parent.SpanID(), op.SpanContext.SpanID())
		}
		id := attrs(rs)["jsonrpc.request.id"].AsString()
		n := int64(2 + i)
		if id != []string{"2", "3"}[i] {
			t.Errorf("round %d: id %q", i, id)
		}
		if sc := sentMeta(t, r.events, n); sc.SpanID() != rs.SpanContext.SpanID() || sc.TraceState().String() != "vendor=x" {
			t.Errorf("round %d: span %v, _meta sent %v", i, rs.SpanContext.SpanID(), sc)
		}
	}
}

// TestHTTPSessionID: a legacy session over HTTP carries mcp.session.id.
func TestHTTPSessionID(t *testing.T) {
	url := fixturetest.ServeHTTP(t) + "/mcp"
	r := follow(t, client.Options{}, FoldOptions{}, client.HTTP(transport.HTTPConfig{URL: url}), func(ctx context.Context, c *client.Client) {
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
	})
	s := spanNamed(t, r.spans, "tools/list")
	if id := attrs(s)["mcp.session.id"].AsString(); id == "" {
		t.Errorf("tools/list: no mcp.session.id: %v", s.Attributes)
	}
	// The fixture's server (net/http on loopback, no TLS) answers in
	// HTTP/1.1.
	want(t, s, map[string]any{"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "1.1"})
}

// TestProtocolVersion: network.protocol.version is the HTTP version the
// server answers in, as the conventions write it ("2", not "2.0"), on the
// spans and on the measurements.
func TestProtocolVersion(t *testing.T) {
	for proto, v := range map[string]string{"HTTP/1.1": "1.1", "HTTP/1.0": "1.0", "HTTP/2.0": "2", "HTTP/3.0": "3", "": "", "SPDY/3": "", "HTTP/x": ""} {
		if got := httpVersion(proto); got != v {
			t.Errorf("httpVersion(%q) = %q, want %q", proto, got, v)
		}
	}
	evs := []client.Event{{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcConnect, Argv: []string{"http://127.0.0.1:9/mcp"}}}}
	for id := range int64(3) {
		evs = append(evs,
			frame(client.Out, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"tools/call","params":{"name":"h2"}}`, client.VerdictSent),
			reqEv(client.Out, jsonrpc.Int(id), mcp.MethodToolsCall, client.StateQueued),
			client.Event{Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", URL: "http://127.0.0.1:9/mcp", Status: 200, Proto: "HTTP/2.0"}},
			frame(client.In, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"result":{}}`, client.VerdictResolved),
			reqEv(client.Out, jsonrpc.Int(id), mcp.MethodToolsCall, client.StateResolved),
		)
	}
	exp := tracetest.NewInMemoryExporter()
	sink := &metricSink{}
	tel := NewWith(keep{exp}, sink, Config{})
	f := NewFolder(tel.tracer, tel.metrics, FoldOptions{})
	at := time.Unix(1700000000, 0)
	for i, ev := range evs {
		ev.Time = at.Add(time.Duration(i) * time.Millisecond)
		f.Apply(ev)
	}
	f.End(at.Add(time.Minute))
	tel.Shutdown(context.Background())
	spans := exp.GetSpans()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	for _, s := range spans {
		want(t, s, map[string]any{"network.transport": "tcp", "network.protocol.name": "http", "network.protocol.version": "2"})
	}
	for _, name := range []string{"mcp.client.operation.duration", "mcp.client.session.duration"} {
		dps := sink.histogram(t, name)
		if len(dps) == 0 {
			t.Errorf("%s: no measurement", name)
		}
		for _, dp := range dps {
			if v, _ := dp.Attributes.Value("network.protocol.version"); v.AsString() != "2" {
				t.Errorf("%s: network.protocol.version %q, want \"2\"", name, v.AsString())
			}
		}
	}
}

// TestContent: --otlp-content adds the arguments and the result, redacted.
func TestContent(t *testing.T) {
	redact := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("s3cret"), []byte("«redacted»")) }
	r := follow(t, client.Options{}, FoldOptions{Content: true, Redact: redact}, stdio(t), func(ctx context.Context, c *client.Client) {
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"s3cret"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	s := spanNamed(t, r.spans, "tools/call echo")
	a := attrs(s)
	if args := a["gen_ai.tool.call.arguments"].AsString(); args != `{"value":"«redacted»"}` {
		t.Errorf("arguments %q", args)
	}
	if res := a["gen_ai.tool.call.result"].AsString(); !strings.Contains(res, "«redacted»") || strings.Contains(res, "s3cret") {
		t.Errorf("result %q", res)
	}
}

// feed folds the given events (synthetic: the rules no fixture reaches)
// and returns the spans.
func feed(t *testing.T, o FoldOptions, evs ...client.Event) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tel := NewWith(keep{exp}, nil, Config{})
	f := NewFolder(tel.tracer, nil, o)
	at := time.Unix(1700000000, 0)
	for i, ev := range evs {
		if ev.Time.IsZero() {
			ev.Time = at.Add(time.Duration(i) * time.Millisecond)
		}
		f.Apply(ev)
	}
	f.End(at.Add(time.Minute))
	tel.Shutdown(context.Background())
	return exp.GetSpans()
}

func frame(dir client.Direction, line string, v client.Verdict) client.Event {
	fr := client.NewInFrame([]byte(line), time.Time{})
	fr.Dir = dir
	return client.Event{Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: fr, Verdict: v}}
}

func reqEv(dir client.Direction, id jsonrpc.ID, method string, st client.State) client.Event {
	return client.Event{Kind: client.EvRequest, Req: &client.ReqInfo{Dir: dir, ID: id, Method: method, State: st}}
}

// TestServerSideErrors: a request of the server's is a SERVER span; the
// codes that are the caller's mistake are not errors there, the others
// are.
func TestServerSideErrors(t *testing.T) {
	spans := feed(t, FoldOptions{},
		client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 1}},
		frame(client.In, `{"jsonrpc":"2.0","id":"a","method":"roots/list"}`, client.VerdictServerRequest),
		reqEv(client.In, jsonrpc.String("a"), "roots/list", client.StateReceived),
		frame(client.Out, `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`, client.VerdictSent),
		reqEv(client.In, jsonrpc.String("a"), "roots/list", client.StateAnswered),
		frame(client.In, `{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage"}`, client.VerdictServerRequest),
		reqEv(client.In, jsonrpc.Int(7), "sampling/createMessage", client.StateReceived),
		frame(client.Out, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"broke"}}`, client.VerdictSent),
		reqEv(client.In, jsonrpc.Int(7), "sampling/createMessage", client.StateAnswered),
		frame(client.In, `{"jsonrpc":"2.0","id":99,"result":{}}`, client.VerdictUnknown),
	)
	roots := spanNamed(t, spans, "roots/list")
	if roots.SpanKind != trace.SpanKindServer || roots.Status.Code != codes.Unset {
		t.Errorf("roots/list: kind %v status %v", roots.SpanKind, roots.Status)
	}
	want(t, roots, map[string]any{"rpc.response.status_code": "-32601", "error.type": nil, "jsonrpc.request.id": "a"})
	smp := spanNamed(t, spans, "sampling/createMessage")
	want(t, smp, map[string]any{"rpc.response.status_code": "-32603", "error.type": "-32603", "jsonrpc.request.id": "7"})
	if smp.Status.Code != codes.Error || smp.Status.Description != "broke" {
		t.Errorf("sampling: status %v", smp.Status)
	}
	if u := spanNamed(t, spans, eventUnknown); !hasEvent(u, eventUnknown) {
		t.Errorf("unknown answer: %+v", u)
	}
}

// TestTapParents: in a tapped session the host's traceparent is the
// parent of the span of its request, and a prompt and a resource name
// their spans and attributes.
func TestTapParents(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	spans := feed(t, FoldOptions{Mode: ModeTap},
		frame(client.Out, `{"jsonrpc":"2.0","id":"x1","method":"prompts/get","params":{"name":"greet","_meta":{"traceparent":"`+tp+`"}}}`, client.VerdictSent),
		reqEv(client.Out, jsonrpc.String("x1"), "prompts/get", client.StateQueued),
		frame(client.In, `{"jsonrpc":"2.0","id":"x1","result":{"messages":[]}}`, client.VerdictResolved),
		reqEv(client.Out, jsonrpc.String("x1"), "prompts/get", client.StateResolved),
		frame(client.Out, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a"}}`, client.VerdictSent),
		reqEv(client.Out, jsonrpc.Int(2), "resources/read", client.StateQueued),
		reqEv(client.Out, jsonrpc.Int(2), "resources/read", client.StateExited),
	)
	p := spanNamed(t, spans, "prompts/get greet")
	want(t, p, map[string]any{"gen_ai.prompt.name": "greet", "jsonrpc.request.id": "x1"})
	if p.Parent.SpanID().String() != "00f067aa0ba902b7" || p.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || p.SpanContext.SpanID() == p.Parent.SpanID() {
		t.Errorf("prompt span %v, parent %v", p.SpanContext, p.Parent)
	}
	r := spanNamed(t, spans, "resources/read")
	want(t, r, map[string]any{"mcp.resource.uri": "file:///a", "error.type": ErrTypeProcessExit})
}

// TestCollectorDown: with nothing listening, the spans are dropped and
// counted, with the first failure, and the session runs as usual.
func TestCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tel, err := New(context.Background(), Config{Endpoint: "http://" + addr, Timeout: 300 * time.Millisecond, NoMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Options{RequestMeta: NewInjector(trace.SpanContext{}).Meta})
	tel.Follow(c.Subscribe(DefaultBuffer), FoldOptions{})
	start(t, c)
	ctx := context.Background()
	for range 20 {
		if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"v"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st := tel.Shutdown(sctx)
	if st.Spans < 22 || st.Dropped != st.Spans || st.Exported != 0 || st.Err == nil {
		t.Fatalf("stats %+v", st)
	}
	if w := st.Warning(); !strings.Contains(w, "spans not exported") || !strings.Contains(w, "first failure") {
		t.Errorf("warning %q", w)
	}
}

func TestConfig(t *testing.T) {
	if _, err := New(context.Background(), Config{Endpoint: "ftp://x"}); !errors.Is(err, ErrEndpoint) {
		t.Errorf("ftp endpoint: %v", err)
	}
	if _, err := ParseTraceparent("nope", ""); !errors.Is(err, ErrTraceparent) {
		t.Errorf("bad traceparent: %v", err)
	}
	t.Setenv(EnvHeaders, "a=1,b=x%20y")
	if h := envHeaders(); h["a"] != "1" || h["b"] != "x y" {
		t.Errorf("headers %v", h)
	}
}

// TestOutcomeErrors: the error.type of each outcome that is not an answer,
// and a duplicate answer as an event.
func TestOutcomeErrors(t *testing.T) {
	call := func(id int64, tool string) []client.Event {
		return []client.Event{
			frame(client.Out, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"tools/call","params":{"name":"`+tool+`"}}`, client.VerdictSent),
			reqEv(client.Out, jsonrpc.Int(id), mcp.MethodToolsCall, client.StateQueued),
		}
	}
	ended := func(id int64, st client.State, err error) client.Event {
		ev := reqEv(client.Out, jsonrpc.Int(id), mcp.MethodToolsCall, st)
		ev.Req.Err = err
		return ev
	}
	var evs []client.Event
	evs = append(evs, client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcConnect, Argv: []string{"http://127.0.0.1:9/mcp"}}})
	evs = append(evs, call(1, "a")...)
	evs = append(evs, ended(1, client.StateHTTP, &client.Error{Code: client.CodeHTTP, Message: "HTTP 503", HTTP: &client.ExchangeError{Status: 503}}))
	evs = append(evs, call(2, "b")...)
	evs = append(evs, ended(2, client.StateHTTP, &client.Error{Code: client.CodeHTTP, Message: "refused", HTTP: &client.ExchangeError{}}))
	evs = append(evs, call(3, "c")...)
	evs = append(evs, ended(3, client.StateProtocol, &client.Error{Code: client.CodeProtocol, Message: "both"}))
	evs = append(evs, call(4, "d")...)
	evs = append(evs, frame(client.In, `{"jsonrpc":"2.0","id":4,"result":{}}`, client.VerdictResolved), ended(4, client.StateResolved, nil),
		frame(client.In, `{"jsonrpc":"2.0","id":4,"result":{}}`, client.VerdictDuplicate))
	evs = append(evs, call(5, "e")...) // no outcome before the end
	spans := feed(t, FoldOptions{}, evs...)
	for name, want := range map[string]string{"a": "503", "b": ErrTypeConnection, "c": ErrTypeProtocol, "e": ErrTypeClosed} {
		s := spanNamed(t, spans, "tools/call "+name)
		if got := attrs(s)["error.type"].AsString(); got != want || s.Status.Code != codes.Error {
			t.Errorf("tools/call %s: error.type %q status %v, want %q", name, got, s.Status, want)
		}
	}
	d := spanNamed(t, spans, "tools/call d")
	if !hasEvent(d, eventDuplicate) || d.Status.Code != codes.Unset {
		t.Errorf("tools/call d: %+v", d)
	}
	want(t, d, map[string]any{"server.address": "127.0.0.1", "server.port": int64(9), "network.transport": "tcp", "network.protocol.name": "http"})
}

// TestSpawnFailedForgetsSession: the attributes a folder keeps per kind
// of operation are made from the session; once a new server could not be
// started, a span no longer carries the old session's transport.
func TestSpawnFailedForgetsSession(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tel := NewWith(keep{exp}, nil, Config{})
	f := NewFolder(tel.tracer, nil, FoldOptions{})
	at := time.Unix(1700000000, 0)
	apply := func(evs ...client.Event) {
		for _, ev := range evs {
			at = at.Add(time.Millisecond)
			ev.Time = at
			f.Apply(ev)
		}
	}
	answered := func(id string) []client.Event {
		return []client.Event{
			frame(client.In, `{"jsonrpc":"2.0","id":"`+id+`","method":"roots/list"}`, client.VerdictServerRequest),
			reqEv(client.In, jsonrpc.String(id), "roots/list", client.StateReceived),
			frame(client.Out, `{"jsonrpc":"2.0","id":"`+id+`","result":{"roots":[]}}`, client.VerdictSent),
			reqEv(client.In, jsonrpc.String(id), "roots/list", client.StateAnswered),
		}
	}
	apply(client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 1}})
	apply(answered("a")...)
	f.Flush(at.Add(time.Hour))
	apply(client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcSpawnFailed}})
	apply(answered("b")...)
	f.End(at.Add(time.Minute))
	tel.Shutdown(context.Background())
	var got []string
	for _, s := range exp.GetSpans() {
		if s.Name == "roots/list" {
			got = append(got, attrs(s)["jsonrpc.request.id"].AsString()+"="+attrs(s)["network.transport"].AsString())
		}
	}
	if len(got) != 2 || got[0] != "a=pipe" || got[1] != "b=" {
		t.Errorf("spans (id=network.transport): %v, want [a=pipe b=]", got)
	}
}
