package live

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDueTimes(t *testing.T) {
	var got []time.Duration
	for at := range dueTimes([]benchStage{{Duration: time.Second, From: 4, To: 4}}) {
		got = append(got, at)
	}
	if len(got) != 4 || got[0] != 0 || got[1] != 250*time.Millisecond || got[3] != 750*time.Millisecond {
		t.Errorf("a constant 4/s for 1s: %v", got)
	}
	// 0 to 100/s over 2s (100 calls), 100/s for 1s (100), down to 0 over
	// 2s (100): 300 calls, each due no earlier than the last, denser where
	// the rate is higher.
	stages, err := parseStages("2s:100,1s:100/s,2s:0")
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for at := range dueTimes(stages) {
		if len(got) > 0 && at < got[len(got)-1] {
			t.Fatalf("call %d due at %v, before %v", len(got), at, got[len(got)-1])
		}
		got = append(got, at)
	}
	if len(got) != 300 || got[299] >= 5*time.Second {
		t.Fatalf("%d calls, the last at %v", len(got), got[len(got)-1])
	}
	// The ramp up: calls(t) = 25 t², so call 25 is due at 1s; the steady
	// stage starts at 2s with call 100.
	near := func(a, b time.Duration) bool { return a-b < time.Millisecond && b-a < time.Millisecond }
	if !near(got[25], time.Second) || !near(got[100], 2*time.Second) || !near(got[150], 2500*time.Millisecond) {
		t.Errorf("due: call 25 at %v, 100 at %v, 150 at %v", got[25], got[100], got[150])
	}
	gapUp, gapSteady := got[11]-got[10], got[151]-got[150]
	if gapUp <= gapSteady {
		t.Errorf("the ramp's calls are no sparser than the steady ones: %v, %v", gapUp, gapSteady)
	}
}

func TestParseStages(t *testing.T) {
	for _, bad := range []string{"", "10s", ":5", "0s:5", "10s:x", "10s:5/h", "25h:5", "10s:5,", "1s:2000000"} {
		if _, err := parseStages(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	st, err := parseStages("10s:50, 30s:120/m")
	if err != nil || len(st) != 2 || st[0] != (benchStage{10 * time.Second, 0, 50}) || st[1] != (benchStage{30 * time.Second, 50, 2}) {
		t.Errorf("%+v %v", st, err)
	}
}

func TestProgressLine(t *testing.T) {
	ths, err := parseThresholds([]string{"p99<5ms", "errors==0", "mismatched==0"})
	if err != nil {
		t.Fatal(err)
	}
	rep := BenchReport{Calls: 1000, Succeeded: 400, Errors: map[string]int{"MCP_TIMEOUT": 2}, CallsPerSec: 201.25, P99MS: 7.5}
	want := "sonde: bench 402/1000 calls, 201.2/s, p99 7.500ms, 2 errors, failing p99<5ms errors==0"
	if got := progressLine(rep, ths); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestShowProgress: on a writer (a terminal), the line is drawn and erased
// at the end; without one, nothing, and it returns at once.
func TestShowProgress(t *testing.T) {
	r := &benchRun{start: time.Now(), rep: BenchReport{Calls: 3, Errors: map[string]int{}}}
	stop := make(chan struct{})
	<-r.showProgress(nil, nil, stop)
	var b syncBuf
	gone := r.showProgress(&b, nil, stop)
	for end := time.Now().Add(time.Minute); !strings.Contains(b.String(), "sonde: bench 0/3 calls"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no progress line in a minute: %q", b.String())
		}
	}
	close(stop)
	<-gone
	if !strings.HasSuffix(b.String(), "\r\x1b[K") {
		t.Errorf("not erased: %q", b.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
