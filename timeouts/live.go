package timeouts

import (
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Live folds a session's events as they come, for a view of the requests
// in flight (sonde's UI): Request returns a request of the current session
// by its id, a record that later events keep up to date (its progress,
// its answer, a late answer after the session gave up), and Standing says
// what a policy makes of it at any moment. The fold is the Collector's;
// nothing is kept for a report: a request that ended is forgotten (one the
// session gave up on once client.DefaultRetiredIDs more wait for a late
// answer), and who holds its record keeps it. Use NewLive; it is not safe
// for concurrent use.
type Live struct{ c *Collector }

// NewLive returns an empty Live.
func NewLive() *Live {
	c := NewCollector(time.Time{}, nil)
	c.live = true
	return &Live{c: c}
}

// Add folds one event in, as Collector.Add.
func (l *Live) Add(ev client.Event) { l.c.Add(ev) }

// Request returns the record of sonde's request id of the current session
// (since the last process start or connection), while it is in flight or
// waits for a late answer; nil otherwise. Look it up when its first event
// was added: the record stays the request's after it is forgotten here.
func (l *Live) Request(id jsonrpc.ID) *Request {
	k := reqKey{l.c.gen, id}
	if r := l.c.open[k]; r != nil {
		return r
	}
	return l.c.waiting[k]
}
