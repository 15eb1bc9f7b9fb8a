package capturegen

import (
	"os"
	"testing"
	"time"
)

// TestWriteForBench writes the million-event capture of the replay, stats
// and lint measurements (docs/performance.md) to the path in
// SONDE_CAPTUREGEN_OUT, for timing whole commands on it:
//
//	SONDE_CAPTUREGEN_OUT=/tmp/million.jsonl go test -run TestWriteForBench ./internal/capturegen/
//
// Without the variable it writes a small one to a temporary folder.
func TestWriteForBench(t *testing.T) {
	o := Options{Events: 1_000_000, Step: 100 * time.Microsecond, SlowEvery: 40, SlowFor: 5000, TimeoutEvery: 90}
	path := os.Getenv("SONDE_CAPTUREGEN_OUT")
	if path == "" {
		o.Events = 2_000
		path = Temp(t, "small.jsonl", o)
	} else if err := Write(path, o); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("%s: %v", path, err)
	}
}
