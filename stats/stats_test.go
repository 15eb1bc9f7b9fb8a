package stats

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/golden"
)

// updating reports whether the test runs with -update (the flag of package
// golden): the sample capture is then recorded again.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// samplePath is the sample used by the README and docs/lint.md's
// neighbours: five concurrent calls with known delays and one timeout.
const samplePath = "../testdata/captures/concurrent-calls.jsonl"

func TestMain(m *testing.M) { capturetest.Main(m) }

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var d []time.Duration
		for _, n := range ns {
			d = append(d, time.Duration(n)*time.Millisecond)
		}
		return d
	}
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	cases := []struct {
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(10, 20, 30), 50, 20 * time.Millisecond},
		{ms(10, 20, 30), 95, 30 * time.Millisecond},
		{ms(10, 20, 30, 40), 50, 20 * time.Millisecond},
		{hundred, 50, 50 * time.Millisecond},
		{hundred, 95, 95 * time.Millisecond},
		{hundred, 99, 99 * time.Millisecond},
		{hundred, 100, 100 * time.Millisecond},
	}
	for _, c := range cases {
		if got := Percentile(c.sorted, c.p); got != c.want {
			t.Errorf("p%v of %v = %v, want %v", c.p, c.sorted, got, c.want)
		}
	}
}

func TestAutoBucket(t *testing.T) {
	for _, c := range []struct{ d, want time.Duration }{
		{0, time.Millisecond},
		{39 * time.Millisecond, time.Millisecond},
		{300 * time.Millisecond, 10 * time.Millisecond},
		{500 * time.Millisecond, 20 * time.Millisecond},
		{1200 * time.Millisecond, 50 * time.Millisecond},
		{2 * time.Second, 100 * time.Millisecond},
		{90 * time.Second, 5 * time.Second},
		{100 * time.Hour, 3 * time.Hour},
	} {
		if got := AutoBucket(c.d); got != c.want || c.d/got >= MaxBuckets {
			t.Errorf("AutoBucket(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}

// delays are the echo calls of the sample, sent at once.
var delays = []int{200, 400, 600, 800, 1000}

// concurrentCalls sends the calls of delays at once, and one more that
// times out after 500ms (its answer would take 3s).
func concurrentCalls(t testing.TB) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, d := range delays {
			wg.Go(func() {
				args := fmt.Sprintf(`{"value":"%d","delay_ms":%d}`, d, d)
				if _, _, err := c.CallTool(ctx, "echo", json.RawMessage(args), client.CallOptions{}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Go(func() {
			_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"slow","delay_ms":3000}`), client.CallOptions{Timeout: 500 * time.Millisecond})
			if !errors.Is(err, client.ErrTimeout) {
				t.Errorf("%v, want MCP_TIMEOUT", err)
			}
		})
		wg.Wait()
	}
}

func collect(evs []client.Event) Report {
	c := New(time.Time{})
	for _, ev := range evs {
		c.Add(ev)
	}
	return c.Report(0)
}

// TestKnownLatencies summarises a real session of calls with known delays:
// each latency is at least its call's delay, the percentiles are the
// nearest-rank values of the recorded latencies, and all six calls were in
// flight at once.
func TestKnownLatencies(t *testing.T) {
	o := capturetest.Options{}
	if updating() {
		o.Path = samplePath
	}
	evs := capturetest.Events(t, capturetest.Record(t, o, concurrentCalls(t)))
	r := collect(evs)
	byName := map[string]Method{}
	for _, m := range r.Methods {
		byName[m.Method+" "+m.Tool] = m
	}
	echo, ok := byName["tools/call echo"]
	if !ok || len(r.Methods) != 2 {
		t.Fatalf("methods %+v, want initialize and tools/call echo", r.Methods)
	}
	if echo.Count != 6 || echo.Errors != 1 || echo.Outcomes["timeout"] != 1 || echo.Outcomes["resolved"] != 5 || echo.Answered != 5 {
		t.Errorf("echo: %+v", echo)
	}
	if in := byName["initialize "]; in.Count != 1 || in.Errors != 0 || in.Answered != 1 || in.P50 != in.Max || in.Max <= 0 {
		t.Errorf("initialize: %+v", in)
	}
	// The latencies as recorded, independently of the collector.
	var lat []time.Duration
	for _, ev := range evs {
		if q := ev.Req; q != nil && q.Method == "tools/call" && q.State == client.StateResolved {
			lat = append(lat, q.Latency)
		}
	}
	slices.Sort(lat)
	if len(lat) != 5 {
		t.Fatalf("%d resolved calls recorded", len(lat))
	}
	for i, d := range delays { // sorted latencies dominate sorted delays
		if lat[i] < time.Duration(d)*time.Millisecond {
			t.Errorf("latency %v below the delay %dms", lat[i], d)
		}
	}
	if echo.P50 != lat[2] || echo.P95 != lat[4] || echo.P99 != lat[4] || echo.Max != lat[4] {
		t.Errorf("p50 %v p95 %v p99 %v max %v, want %v %v %v %v", echo.P50, echo.P95, echo.P99, echo.Max, lat[2], lat[4], lat[4], lat[4])
	}
	cc := r.Concurrency
	if cc.Max != 6 || !slices.Contains(cc.InFlight, 6) || slices.Max(cc.InFlight) != 6 {
		t.Errorf("concurrency %+v, want 6 at most", cc)
	}
	if got := time.Duration(len(cc.InFlight)) * cc.Bucket; got <= r.Duration || cc.Bucket != AutoBucket(r.Duration) {
		t.Errorf("%d buckets of %v do not cover %v", len(cc.InFlight), cc.Bucket, r.Duration)
	}
}

// TestSampleText checks the text report of the committed sample against
// its golden file.
func TestSampleText(t *testing.T) {
	var b strings.Builder
	if err := collect(capturetest.Events(t, samplePath)).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "concurrent-calls", b.String())
}

// TestRestart: a process start begins a new id space; requests of the old
// process still in flight are gone with it.
func TestRestart(t *testing.T) {
	evs := capturetest.Events(t, samplePath)
	var cut []client.Event
	for _, ev := range evs { // up to the moment all six calls are in flight
		cut = append(cut, ev)
		if ev.Req != nil && ev.Req.State == client.StateSent && ev.Req.ID.String() == "7" {
			break
		}
	}
	c := New(time.Time{})
	for _, ev := range append(cut, evs...) {
		c.Add(ev)
	}
	r := c.Report(0)
	if r.Concurrency.Max != 6 || r.Requests != 8 {
		t.Errorf("after a restart: max %d requests %d, want 6 and 8 (initialize twice)", r.Concurrency.Max, r.Requests)
	}
}
