package capture

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestRecordBigResponseMemory: a 64 MiB response from the fixture (a real
// subprocess) read by the client and written to a capture file by the
// recorder allocates at most 2.5× the line in all: the line reader's ~2×,
// and the record's raw bytes escaped straight to the file in small pieces,
// not a string copy, an escaped copy and a grown buffer. TotalAlloc counts
// bytes, not time; the sampled peak of the heap in use is logged.
func TestRecordBigResponseMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 64 MiB response")
	}
	const n = 64 << 20
	l := startLive(t, liveOpts{maxLine: 200 << 20, timeout: time.Minute})
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	params := json.RawMessage(`{"name":"big","arguments":{"bytes":` + strconv.Itoa(n) + `}}`)
	var sum Summary
	var err error
	use := memtest.Measure(func() {
		if _, err = l.c.Call(context.Background(), "tools/call", params, client.CallOptions{}); err == nil {
			_, sum = l.finish()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Err != nil {
		t.Fatal(sum.Err)
	}
	if fi, err := os.Stat(l.path); err != nil || fi.Size() < n {
		t.Fatalf("capture: %v, %v", fi, err)
	}
	t.Logf("a %d MiB response, recorded: allocated %.1f MiB (%.2f×), heap in use at most %.1f MiB (%.2f×) above %.1f MiB before",
		n>>20, float64(use.Total)/(1<<20), memtest.Ratio(use.Total, n), float64(use.Peak)/(1<<20), memtest.Ratio(use.Peak, n), float64(use.Before)/(1<<20))
	if use.Total > n*5/2 {
		t.Errorf("allocated %d bytes for a %d-byte response (%.2f×), want at most 2.5×", use.Total, n, memtest.Ratio(use.Total, n))
	}
}
