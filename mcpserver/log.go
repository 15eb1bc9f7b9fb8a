package mcpserver

import (
	"bytes"
	"sync"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/ring"
)

// The bounds of a session's log: what the tools can look back on. What
// falls out is counted (eventLog.evicted).
const (
	logEvents      = 8192     // events kept
	logBytes       = 32 << 20 // bytes of frames kept
	logStderrLines = 2000     // stderr lines kept
	logStderrLine  = 4096     // bytes of one stderr line kept
)

// eventLog is a session's events as the tools read them: the last
// logEvents events (at most logBytes of frames) and the last
// logStderrLines lines of stderr. It is safe for concurrent use.
type eventLog struct {
	mu      sync.Mutex
	events  ring.Ring[logged]
	bytes   int
	reqs    requests
	items   *filter.Requests // what a filter knows of each frame's request
	stderr  ring.Ring[string]
	partial []byte // the stderr line not ended yet
	missed  uint64 // events the subscription dropped
	ended   bool   // the feeding subscription closed
	changed chan struct{}
}

func newEventLog() *eventLog {
	return &eventLog{events: ring.New[logged](logEvents), stderr: ring.New[string](logStderrLines), reqs: newRequests(),
		items: filter.NewLiveRequests(keptFinals), changed: make(chan struct{})}
}

// follow feeds the log from sub until its channel closes; it returns at
// once, and done is closed when the feeding ends.
func (l *eventLog) follow(sub *client.Subscription) (done <-chan struct{}) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for ev := range sub.C {
			l.add(ev)
		}
		l.mu.Lock()
		l.missed = sub.Missed()
		l.ended = true
		l.flushStderrLocked()
		l.notifyLocked()
		l.mu.Unlock()
	}()
	return ch
}

// add appends one event.
func (l *eventLog) add(ev client.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Kind == client.EvStderr {
		l.stderrLocked(ev.Stderr)
	}
	l.reqs.apply(ev)
	l.items.Learn(ev)
	if old, evicted := l.events.Push(logged{ev, l.items.Gen()}); evicted {
		l.bytes -= eventSize(old.ev)
	}
	l.bytes += eventSize(ev)
	for l.bytes > logBytes && l.events.Len() > 1 {
		old, _ := l.events.DropOldest()
		l.bytes -= eventSize(old.ev)
	}
	l.notifyLocked()
}

// eventSize is what an event holds in bytes, roughly: its frame's raw
// bytes and its stderr chunk.
func eventSize(ev client.Event) int {
	n := len(ev.Stderr)
	if ev.Frame != nil {
		n += len(ev.Frame.Raw)
	}
	return n
}

func (l *eventLog) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// stderrLocked splits a chunk of stderr into lines.
func (l *eventLog) stderrLocked(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.partial = appendCapped(l.partial, b)
			return
		}
		l.partial = appendCapped(l.partial, b[:i])
		l.flushStderrLocked()
		b = b[i+1:]
	}
}

func (l *eventLog) flushStderrLocked() {
	if l.partial == nil {
		return
	}
	l.stderr.Push(string(bytes.TrimSuffix(l.partial, []byte("\r"))))
	l.partial = nil
}

// appendCapped appends b to line, keeping at most logStderrLine bytes.
func appendCapped(line, b []byte) []byte {
	if line == nil {
		line = []byte{}
	}
	if room := logStderrLine - len(line); room < len(b) {
		b = b[:max(room, 0)]
	}
	return append(line, b...)
}

// newestFirst calls fn with the events held, newest first, until fn returns
// false. fn runs under the log's lock: it must not call the log.
func (l *eventLog) newestFirst(fn func(client.Event) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := l.events.Len() - 1; i >= 0; i-- {
		if !fn(l.events.At(i).ev) {
			return
		}
	}
}

// since returns the events held whose Seq is above seq, oldest first.
func (l *eventLog) since(seq uint64) []client.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []client.Event
	for i := l.events.Len() - 1; i >= 0; i-- {
		ev := l.events.At(i).ev
		if ev.Seq <= seq {
			break
		}
		out = append(out, ev)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// lastSeq is the Seq of the newest event held (0: none).
func (l *eventLog) lastSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events.Len() == 0 {
		return 0
	}
	return l.events.At(l.events.Len() - 1).ev.Seq
}

// logged is an event with the server process it belongs to (for filter).
type logged struct {
	ev  client.Event
	gen int
}

// frames calls fn with the frames held whose Seq is below before (0: no
// bound), newest first, each with what a filter knows of it, until fn
// returns false. fn runs under the log's lock.
func (l *eventLog) frames(before uint64, fn func(ev client.Event, it filter.Item) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := l.events.Len() - 1; i >= 0; i-- {
		e := l.events.At(i)
		if e.ev.Kind != client.EvFrame || e.ev.Frame == nil || (before > 0 && e.ev.Seq >= before) {
			continue
		}
		it, _ := l.items.ItemAt(e.ev, e.gen)
		if !fn(e.ev, it) {
			return
		}
	}
}

// withRequests runs fn on the request fold under the log's lock.
func (l *eventLog) withRequests(fn func(r *requests)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(&l.reqs)
}

// evicted is how many events the log no longer holds, and how many the
// subscription dropped.
func (l *eventLog) evicted() (dropped, missed uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events.Evicted(), l.missed
}

// stderrTail returns the last n lines of stderr (the line not ended yet
// included) and how many lines were dropped before the oldest kept.
func (l *eventLog) stderrTail(n int) (lines []string, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	total := l.stderr.Len()
	for i := max(total-n, 0); i < total; i++ {
		lines = append(lines, *l.stderr.At(i))
	}
	if len(l.partial) > 0 {
		lines = append(lines, string(l.partial))
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines, l.stderr.Evicted()
}

// wait returns a channel closed at the log's next change.
func (l *eventLog) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}
