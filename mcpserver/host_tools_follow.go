package mcpserver

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/sessions"
)

// followPoll is how often a followed recording is looked at for more (as
// sonde watch).
const followPoll = 100 * time.Millisecond

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
	gr := sessions.NewFollower(ctx, f, pid, followPoll)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer gr.Done()
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
	return gr.CaughtUp(), func() { cancel(); <-done; f.Close() }, nil
}
