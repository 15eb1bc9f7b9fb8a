package capture

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// syncBuffer is a file stand-in read while the recorder writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRecorderFlushAfter: with FlushAfter, an event waits in the buffer
// (here: still absent 400 ms after it was recorded, FlushAfter being 2 s)
// and then reaches the file without another event coming; Close writes
// what waits at once.
func TestRecorderFlushAfter(t *testing.T) {
	t.Run("timer", func(t *testing.T) {
		var w syncBuffer
		r, err := NewRecorder(&w, Options{FlushAfter: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		obs := client.NewObserver(0)
		r.Follow(obs)
		start := time.Now()
		obs.Note("first", start)
		time.Sleep(400 * time.Millisecond)
		if strings.Contains(w.String(), "first") {
			t.Fatalf("written after %v, before FlushAfter", time.Since(start))
		}
		for !strings.Contains(w.String(), "first") {
			if time.Since(start) > 20*time.Second {
				t.Fatal("never written")
			}
			time.Sleep(50 * time.Millisecond)
		}
		obs.Close()
		r.Close()
	})
	t.Run("close", func(t *testing.T) {
		var w syncBuffer
		r, err := NewRecorder(&w, Options{FlushAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		obs := client.NewObserver(0)
		r.Follow(obs)
		obs.Note("last", time.Now())
		obs.Close()
		r.Close()
		if s := w.String(); !strings.Contains(s, "last") || !strings.Contains(s, `"type":"end"`) {
			t.Fatalf("after Close:\n%s", s)
		}
	})
}
