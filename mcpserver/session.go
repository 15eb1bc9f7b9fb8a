package mcpserver

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/capture"
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
	kind    string
	started time.Time
	client  *client.Client
	log     *eventLog
	redact  *capture.Redactor
	owner   *sdk.ServerSession // the client's MCP session that started it (nil: none known)
	inject  func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

	closeOnce sync.Once
	closeFn   func()
}

// sessionParts are what a session is made of (newSession).
type sessionParts struct {
	// ID is the id registry.reserve gave.
	ID string
	// Label says what runs, for people ("./my-server --flag", a URL, a
	// server's name); Kind what sort of session it is ("started" for
	// session_start's).
	Label, Kind string
	// Client is sonde's client on the server (nil: none of its own).
	Client *client.Client
	// Log holds its events (fed by the caller: eventLog.follow or add).
	Log *eventLog
	// Redact replaces its secrets in what the tools return (nil: none).
	Redact *capture.Redactor
	// Inject, for a session without a client of its own (a tapped
	// session), sends a request of sonde's into it as sonde inject does
	// and returns the answer's result; session_call and session_request
	// use it. nil: they refuse.
	Inject func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Owner is the client's MCP session it belongs to: it is closed when
	// that one ends (caller(ctx) in a tool; nil: only at sonde mcp's end).
	Owner *sdk.ServerSession
	// Close ends it: the client, its process, what feeds Log. Called
	// once.
	Close func()
}

func newSession(p sessionParts) *session {
	n, _ := strconv.Atoi(strings.TrimPrefix(p.ID, "s"))
	return &session{id: p.ID, seq: n, label: p.Label, kind: p.Kind, started: time.Now(), client: p.Client, log: p.Log, redact: p.Redact, owner: p.Owner, inject: p.Inject, closeFn: p.Close}
}

// close ends the session; it may be called more than once.
func (s *session) close() {
	s.closeOnce.Do(func() {
		if s.closeFn != nil {
			s.closeFn()
		}
	})
}
