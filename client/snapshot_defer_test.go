package client

import (
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// deferClient is a client whose server is this process (read for real),
// in a synctest bubble: the clock moves only when every goroutine waits.
func deferClient(t *testing.T) *Client {
	t.Helper()
	if _, err := transport.StatGroup(os.Getpid()); errors.Is(err, transport.ErrStatUnsupported) {
		t.Skip(err)
	}
	c := New(Options{})
	c.mu.Lock()
	c.watch.pid, c.initialized = os.Getpid(), true
	c.mu.Unlock()
	return c
}

// queue adds a pending request with timeout as start does, and returns it.
func queue(c *Client, id int64, timeout time.Duration) *pending {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	p := &pending{id: id, method: "tools/call", queuedAt: now, timeout: timeout, deadline: now.Add(timeout),
		call: &Call{done: make(chan struct{})}, timer: time.NewTimer(time.Hour), stopCtx: func() bool { return true }}
	c.watch.baselineLocked(p, now)
	c.pending[id] = p
	return p
}

// TestCPUBaselineDeferred: the CPU baseline of a request is read cpuDefer
// after it was queued (a quarter of its timeout when that is shorter), and
// not at all when no request still waits for it then: a session whose
// requests are answered quickly walks no /proc for them. Close does not
// wait for a reading that is not under way.
func TestCPUBaselineDeferred(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := deferClient(t)
			queue(c, 1, 30*time.Second)
			c.mu.Lock()
			delete(c.pending, 1) // answered before the reading was due
			c.mu.Unlock()
			time.Sleep(2 * cpuDefer)
			synctest.Wait()
			c.mu.Lock()
			at, reading := c.watch.cpu.at, c.watch.reading
			c.mu.Unlock()
			if !at.IsZero() || reading {
				t.Errorf("a reading was taken (at %v, reading %v) for a request answered before it was due", at, reading)
			}
			c.Close()
		})
	})
	t.Run("waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := deferClient(t)
			start := time.Now()
			slow := queue(c, 1, 30*time.Second)
			quick := queue(c, 2, 40*time.Millisecond) // due sooner: the reading comes forward
			time.Sleep(2 * cpuDefer)
			synctest.Wait()
			c.mu.Lock()
			a, b := slow.cpuBase.at, quick.cpuBase.at
			c.mu.Unlock()
			if want := start.Add(10 * time.Millisecond); !a.Equal(want) || !b.Equal(want) {
				t.Errorf("baselines read at +%v and +%v, want both at +10ms", a.Sub(start), b.Sub(start))
			}
			c.Close()
		})
	})
	t.Run("close", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := deferClient(t)
			start := time.Now()
			queue(c, 1, 30*time.Second)
			c.Close()
			if d := time.Since(start); d != 0 {
				t.Errorf("Close waited %v for a reading that was not due", d)
			}
		})
	})
}
