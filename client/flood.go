package client

import (
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/transport"
)

// CodeFlood: the server sent more notifications in one second than
// Options.Flood allows (a count or bytes): it is stopped as a server that
// breaks the protocol, every pending request failing with this code. It
// also matches ErrProtocol.
const CodeFlood Code = "MCP_FLOOD"

// ErrFlood matches a CodeFlood error with errors.Is.
var ErrFlood = &Error{Code: CodeFlood}

// FloodLimit bounds the notifications a server may send: past PerSecond
// notifications, or BytesPerSecond bytes of them, within one second, the
// session is ended (MCP_FLOOD). Zero fields are no limit.
type FloodLimit struct {
	PerSecond      int
	BytesPerSecond int
}

// Defaults of the headless commands' flood limit: generous, a server
// logging hard stays far below them.
const (
	DefaultFloodPerSecond = 10000
	DefaultFloodBytes     = 64 << 20
)

// floodWindow counts the notifications of the current one-second window.
// It is guarded by Client.mu: the reader calls floodLocked with it held.
type floodWindow struct {
	c     *Client // the client it belongs to
	start time.Time
	n     int
	bytes int
}

// floodLocked counts notification f; when it passes the limit, the session
// breaks (every pending request fails with MCP_FLOOD, the server is
// stopped at once) and it reports true.
func (w *floodWindow) floodLocked(f transport.Frame) bool {
	c := w.c
	lim := c.opts.Flood
	if lim.PerSecond <= 0 && lim.BytesPerSecond <= 0 {
		return false
	}
	if w.start.IsZero() || f.Time.Sub(w.start) >= time.Second {
		w.start, w.n, w.bytes = f.Time, 0, 0
	}
	w.n++
	w.bytes += len(f.Raw)
	var what string
	switch {
	case lim.PerSecond > 0 && w.n > lim.PerSecond:
		what = fmt.Sprintf("more than %d notifications within one second (--flood-limit)", lim.PerSecond)
	case lim.BytesPerSecond > 0 && w.bytes > lim.BytesPerSecond:
		what = fmt.Sprintf("more than %d bytes of notifications within one second (--flood-bytes)", lim.BytesPerSecond)
	default:
		return false
	}
	if c.dead == nil {
		c.hub.emitFrame(f, VerdictNotification, f.Msg.Method+"; flood limit passed")
		c.breakLocked(newErr(CodeFlood, "the server sent %s: stopped as a server that breaks the protocol", what))
	}
	return true
}
