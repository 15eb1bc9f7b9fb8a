package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// TestStress pipelines thousands of calls with random delays, timeouts and
// cancels over one fixture process: every call settles exactly once, with
// its own result; afterwards nothing is pending, no goroutine is left
// (goleak in TestMain) and no process either (the session cleanup).
func TestStress(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	s := start(t, Options{MaxPending: n}, fixtureArgs{})
	s.init()
	rng := rand.New(rand.NewPCG(1, 2))
	type job struct {
		call   *Call
		value  string
		cancel context.CancelFunc
	}
	jobs := make([]job, n)
	var cancels sync.WaitGroup
	for i := range jobs {
		value := "v" + strconv.Itoa(i)
		timeout := 10 * time.Second
		if rng.IntN(5) == 0 {
			timeout = time.Duration(1+rng.IntN(15)) * time.Millisecond
		}
		ctx, cancel := context.WithCancel(context.Background())
		args := fmt.Sprintf(`{"name":"echo","arguments":{"value":%q,"delay_ms":%d}}`, value, rng.IntN(20))
		jobs[i] = job{call: s.c.Go(ctx, "tools/call", json.RawMessage(args), CallOptions{Timeout: timeout}), value: value, cancel: cancel}
		if rng.IntN(5) == 0 {
			cancels.Add(1)
			time.AfterFunc(time.Duration(rng.IntN(15))*time.Millisecond, func() { cancel(); cancels.Done() })
		}
	}
	counts := map[State]int{}
	for _, j := range jobs {
		raw, err := j.call.Wait()
		j.cancel()
		switch {
		case err == nil:
			var r struct {
				Content []struct{ Text string } `json:"content"`
			}
			if json.Unmarshal(raw, &r) != nil || len(r.Content) != 1 || r.Content[0].Text != j.value {
				t.Fatalf("call %s for %s got %s", j.call.ID, j.value, raw)
			}
			counts[StateResolved]++
		case errors.Is(err, ErrTimeout):
			counts[StateTimeout]++
		case errors.Is(err, ErrAborted):
			counts[StateCancelled]++
		default:
			t.Fatalf("call %s: unexpected %v", j.call.ID, err)
		}
	}
	cancels.Wait()
	t.Logf("outcomes: %v", counts)
	if counts[StateResolved] == 0 || counts[StateTimeout] == 0 || counts[StateCancelled] == 0 {
		t.Fatalf("the mix did not exercise every path: %v", counts)
	}
	if err := s.c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := s.c.Pending(); p != 0 {
		t.Fatalf("%d pending", p)
	}
	s.c.Close()
	<-s.done
	// Exactly one outcome event per request id.
	outcomes := map[string]int{}
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.Out && ev.Req.State.Final() && ev.Req.ID.IsValid() {
			outcomes[ev.Req.ID.String()]++
		}
	}
	for _, j := range jobs {
		if k := outcomes[j.call.ID.String()]; k != 1 {
			t.Fatalf("request %s has %d outcomes", j.call.ID, k)
		}
	}
}
