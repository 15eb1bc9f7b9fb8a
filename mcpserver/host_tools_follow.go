package mcpserver

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/sessions"
)

// followPoll is how often a followed recording is looked at for more (as
// sonde watch).
const followPoll = 100 * time.Millisecond

// growingFile reads a recording that is still being written: at its end
// it waits for more, until ctx ends, or the tap that writes it (pid) is
// gone and nothing more came. caughtUp is closed the first time it
// reaches the end.
type growingFile struct {
	ctx      context.Context
	f        *os.File
	pid      int
	once     sync.Once
	caughtUp chan struct{}
}

func (r *growingFile) Read(p []byte) (int, error) {
	for {
		n, err := r.f.Read(p)
		if n > 0 || (err != nil && !errors.Is(err, io.EOF)) {
			return n, err
		}
		r.once.Do(func() { close(r.caughtUp) })
		if r.pid > 0 && !sessions.Live(r.pid) {
			if n, _ := r.f.Read(p); n > 0 { // what it wrote before it went
				return n, nil
			}
			return 0, io.EOF
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(followPoll):
		}
	}
}

// followRecording feeds log with the events of the recording at path as
// it grows, from its start, until it ends (its end record, its tap gone)
// or stop is called. caughtUp is closed once what was there at the start
// was read (or the follow ended); stop ends the follow and waits for it.
func followRecording(path string, pid int, log *eventLog) (caughtUp <-chan struct{}, stop func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	gr := &growingFile{ctx: ctx, f: f, pid: pid, caughtUp: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer gr.once.Do(func() { close(gr.caughtUp) })
		rd, err := capture.NewReader(gr)
		if err != nil {
			return
		}
		h := rd.Header()
		for rec, err := range rd.All() {
			var fe *capture.FormatError
			if errors.As(err, &fe) {
				continue // a damaged line: the next ones still read
			}
			if err != nil || rec.Type == capture.TypeEnd {
				return
			}
			if ev, ok, err := h.Event(rec); ok && err == nil {
				log.add(ev)
			}
		}
	}()
	return gr.caughtUp, func() { cancel(); <-done; f.Close() }, nil
}
