package mcpserver

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// session is one target server as the agent sees it: sonde's client on it
// (nil for a session with no client of its own, such as a tapped session
// attached by session_open), and the log of its events that the tools
// read.
type session struct {
	id      string
	seq     int // the number in id, for ordering
	label   string
	started time.Time
	client  *client.Client
	log     *eventLog

	closeOnce sync.Once
	closeFn   func()
}

// newSession is the session id of a client (c may be nil) whose events
// reach log; closeFn ends it (the client, its process, the feeding
// goroutine), and is called once.
func newSession(id, label string, c *client.Client, log *eventLog, closeFn func()) *session {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "s"))
	return &session{id: id, seq: n, label: label, started: time.Now(), client: c, log: log, closeFn: closeFn}
}

// close ends the session; it may be called more than once.
func (s *session) close() {
	s.closeOnce.Do(func() {
		if s.closeFn != nil {
			s.closeFn()
		}
	})
}
