package client

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestBigResponseMemory: a 64 MiB response from the fixture (a real
// subprocess) through the client allocates about twice the line in all
// (the line reader's blocks and the line), and nothing per byte after
// that: the decoded result is a part of the line, not a copy. TotalAlloc
// counts bytes, not time, so the bound holds on a busy machine; the
// sampled peak of the heap in use is logged.
func TestBigResponseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 64 MiB response")
	}
	const n = 64 << 20
	s := start(t, Options{MaxLineBytes: 200 << 20, Timeout: time.Minute}, fixtureArgs{})
	s.init()
	params := json.RawMessage(`{"name":"big","arguments":{"bytes":` + strconv.Itoa(n) + `}}`)
	var res json.RawMessage
	var err error
	use := memtest.Measure(func() { res, err = s.c.Call(context.Background(), "tools/call", params, CallOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < n {
		t.Fatalf("result of %d bytes", len(res))
	}
	t.Logf("a %d MiB response: allocated %.1f MiB (%.2f×), heap in use at most %.1f MiB (%.2f×) above %.1f MiB before",
		n>>20, float64(use.Total)/(1<<20), memtest.Ratio(use.Total, n), float64(use.Peak)/(1<<20), memtest.Ratio(use.Peak, n), float64(use.Before)/(1<<20))
	if use.Total > n*9/4 {
		t.Errorf("allocated %d bytes for a %d-byte response (%.2f×), want at most 2.25×", use.Total, n, memtest.Ratio(use.Total, n))
	}
}
