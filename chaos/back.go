package chaos

import (
	"fmt"
	"sync"
)

// MaxBackBytes is what the error answers to a server's requests (an error
// rule on frames going to the host) may hold while they wait for the
// server's stdin, per session: an answer past it is not sent (noted).
const MaxBackBytes = 16 << 20

// backQueue carries the lines the server-to-host direction writes to the
// server (an error answer to the server's request) on a goroutine of
// their own, in order. That direction is the forwarder of the server's
// stdout: if it waited for the server's stdin, a server busy writing, its
// stdin full, would wait for its stdout to be read, and neither would
// move again. The goroutine runs while lines wait and ends when none do.
type backQueue struct {
	mu      sync.Mutex
	lines   [][]byte // each ends with "\n"
	bytes   int
	running bool
}

// sendBack writes eff.Back to the other direction's output: at once for
// the host-to-server direction (the answer goes to the host, which reads
// its stdout as a server's would be read), through f.bq for the other.
func (f *LineWriter) sendBack(eff Effect) {
	if f.dir != ToHost {
		for _, l := range eff.Back {
			_ = f.back.write(lineOf(l), false, false)
		}
		return
	}
	q := &f.bq
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, l := range eff.Back {
		if q.bytes+len(l)+1 > MaxBackBytes {
			n := Note{Action: Error, Dir: f.dir}
			for _, en := range eff.Notes {
				if en.Action == Error {
					n = en
				}
			}
			n.Text = fmt.Sprintf("did not send an error answer to the server: %d bytes of answers wait for its stdin already, at most %d (docs/chaos.md, \"Limits\")", q.bytes, MaxBackBytes)
			f.h.Note(n)
			continue
		}
		q.lines = append(q.lines, lineOf(l))
		q.bytes += len(l) + 1
	}
	if !q.running && len(q.lines) > 0 {
		q.running = true
		go f.pumpBack()
	}
}

// pumpBack writes what waits in f.bq, in order, until nothing does. A
// closed pipe's output writes nothing, so the queue then empties at once.
func (f *LineWriter) pumpBack() {
	q := &f.bq
	for {
		q.mu.Lock()
		if len(q.lines) == 0 {
			q.lines, q.running = nil, false
			q.mu.Unlock()
			return
		}
		l := q.lines[0]
		q.lines[0] = nil
		q.lines = q.lines[1:]
		q.bytes -= len(l)
		q.mu.Unlock()
		_ = f.back.write(l, false, false)
	}
}
