package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestObserverStartsSmall: a new observer costs about a kilobyte, not the
// two DefaultRetiredIDs-entry maps it used to make up front (2.6 MB each:
// an HTTP tap keeps one observer per session, and 1,000 sessions took it
// past 2.6 GB). TotalAlloc counts bytes, so the bound holds on a busy
// machine.
func TestObserverStartsSmall(t *testing.T) {
	const n = 100
	keep := make([]*Observer, 0, n)
	use := memtest.Measure(func() {
		for range n {
			keep = append(keep, NewObserver(0))
		}
	})
	per := use.Total / n
	t.Logf("a new observer allocates %d bytes", per)
	if per > 4<<10 {
		t.Errorf("a new observer allocates %d bytes, want at most 4 KiB", per)
	}
	_ = keep
}

// TestObserverRetiredBounded: what an observer remembers of ended
// requests grows with them up to its bound and no further; the newest
// are remembered (a second answer is a duplicate), the oldest forgotten
// (a second answer is unknown).
func TestObserverRetiredBounded(t *testing.T) {
	const bound, requests = 64, 1000
	o := NewObserver(bound)
	sub := o.Subscribe(16)
	go func() {
		for range sub.C {
		}
	}()
	t0 := time.Unix(1000, 0)
	call := func(id int) {
		o.Message(Out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id), t0, "POST", "")
		o.Message(In, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id), t0, "POST", "")
	}
	for id := range requests {
		call(id)
		if got := len(o.host.retired); got > bound || got != min(id+1, bound) {
			t.Fatalf("after %d requests, %d remembered, want %d", id+1, got, min(id+1, bound))
		}
		if cap(o.host.ring) > bound {
			t.Fatalf("after %d requests, a ring of %d, over the bound %d", id+1, cap(o.host.ring), bound)
		}
	}
	if len(o.server.retired) != 0 || o.server.retired != nil {
		t.Errorf("the server's side remembers %d requests, none ended", len(o.server.retired))
	}
	o.Close()

	// The answers again: the last bound ids are duplicates, the others
	// unknown.
	o2 := NewObserver(bound)
	sub2 := o2.Subscribe(8 * requests)
	for id := range requests {
		o2.Message(Out, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id), t0, "POST", "")
		o2.Message(In, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id), t0, "POST", "")
	}
	for _, id := range []int{0, requests - bound - 1, requests - bound, requests - 1} {
		o2.Message(In, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{}}`, id), t0, "POST", "again")
	}
	o2.Close()
	var got []string
	for ev := range sub2.C {
		if ev.Kind == EvFrame && ev.Frame.EventID == "again" {
			got = append(got, string(ev.Frame.Verdict))
		}
	}
	want := fmt.Sprint([]Verdict{VerdictUnknown, VerdictUnknown, VerdictDuplicate, VerdictDuplicate})
	if fmt.Sprint(got) != want {
		t.Errorf("second answers of the first, the last forgotten, the oldest remembered and the newest id: %v, want %v", got, want)
	}
}

// BenchmarkObserverCall: one request and its answer through an observer
// (a tapped session's steady state, past the retired ids' bound): its
// allocations per call, and what a session's first calls cost
// (first=16: a new observer each 16 calls).
func BenchmarkObserverCall(b *testing.B) {
	for _, first := range []int{0, 16} {
		b.Run(fmt.Sprintf("first=%d", first), func(b *testing.B) {
			reqs := make([][]byte, 8192)
			resps := make([][]byte, len(reqs))
			for i := range reqs {
				reqs[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"value":"v"}}}`, i)
				resps[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)
			}
			o := NewObserver(0)
			t0 := time.Unix(1000, 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if first > 0 && i%first == 0 {
					o = NewObserver(0)
				}
				k := i % len(reqs)
				o.Message(Out, reqs[k], t0, "POST 1", "")
				o.Message(In, resps[k], t0, "POST 1", "")
			}
		})
	}
}
