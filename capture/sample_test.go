package capture

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

var update = flag.Bool("update", false, "regenerate the sample captures in ../testdata/captures")

// samplePath is the sample capture used by docs/capture-format.md.
const samplePath = "../testdata/captures/out-of-order-late-crash.jsonl"

// TestSampleCapture checks the committed sample capture; with -update it
// first records it again from a real session against the fixture:
//
//	go test ./capture -run TestSampleCapture -update
func TestSampleCapture(t *testing.T) {
	if *update {
		recordSample(t)
	}
	rd, recs := readAll(t, samplePath)
	if len(rd.Warnings()) > 0 {
		t.Fatalf("warnings: %v", rd.Warnings())
	}
	seen := map[string]bool{}
	for _, r := range recs {
		ev, ok, err := rd.Header().Event(r)
		if err != nil {
			t.Fatal(err)
		}
		seen[r.Type] = true
		if ok && ev.Kind == client.EvFrame {
			seen["frame "+string(ev.Frame.Verdict)] = true
		}
		if r.Type == TypeProcess && r.What == string(client.ProcExit) && r.Exit.Code == 3 {
			seen["crash"] = true
		}
	}
	for _, k := range []string{TypeSession, TypeRequest, TypeStderr, TypeEnd, "frame sent", "frame resolved", "frame late", "frame malformed", "crash"} {
		if !seen[k] {
			t.Errorf("the sample has no %s", k)
		}
	}
}

// recordSample records the sample: two calls answered out of order, a call
// that times out and is answered late, noise on stdout, and a crash with a
// call in flight.
func recordSample(t *testing.T) {
	l := startLive(t, liveOpts{faults: []string{"--fault", "stdout-noise", "--late-ms", "40"}, redact: []string{`/[^" ]*/`}})
	ctx := context.Background()
	if _, err := l.c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, a := range []string{`{"value":"slow","delay_ms":80}`, `{"value":"fast"}`} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := l.c.CallTool(ctx, "echo", json.RawMessage(a), client.CallOptions{}); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(5 * time.Millisecond) // slow is sent first
	}
	wg.Wait()
	_, _, err := l.c.CallTool(ctx, "echo", json.RawMessage(`{"value":"late","delay_ms":60,"ignore_cancel":true}`), client.CallOptions{Timeout: 20 * time.Millisecond})
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("%v, want MCP_TIMEOUT", err)
	}
	time.Sleep(80 * time.Millisecond) // the late answer arrives
	if _, _, err := l.c.CallTool(ctx, "crash", nil, client.CallOptions{}); !errors.Is(err, client.ErrProcessExit) {
		t.Fatalf("crash: %v", err)
	}
	l.finish()
	data, err := os.ReadFile(l.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(samplePath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(samplePath, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
