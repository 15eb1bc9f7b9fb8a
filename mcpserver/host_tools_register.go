package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// injectTimeout is how long an injected request waits for its answer when
// the call's context has no deadline (sonde inject's default).
const injectTimeout = 30 * time.Second

// openWait bounds how long session_open waits for what the recording
// already holds to be read.
const openWait = 10 * time.Second

type doctorIn struct {
	Server string `json:"server,omitempty" jsonschema:"a configured server's name (sonde config list); none: every configured server"`
}

type sessionsIn struct{}

type openIn struct {
	ID string `json:"id" jsonschema:"a live tapped session's id from sessions_list (the start of one will do)"`
}

// OpenResult is session_open's answer.
type OpenResult struct {
	// Session is its id here: session_frames, session_pending,
	// session_explain and session_stderr take it, and session_call and
	// session_request inject into it.
	Session string        `json:"session"`
	Tapped  TappedSession `json:"tapped"`
	// Events is how many of its events were read when it opened.
	Events int `json:"events"`
	// Resource is its recording's URI (resources/read, subscribe).
	Resource string `json:"resource"`
}

// registerHostTools registers doctor, sessions_list and session_open.
func (s *Server) registerHostTools() {
	addTool(s, &sdk.Tool{
		Name: "doctor",
		Description: "sonde doctor's checklist over the servers of the hosts' config files (or the one named): per server its ordered steps " +
			"(config, command on PATH, spawn, stdout clean, initialize, protocol, capabilities, tools/list, schemas, ping, lint, shutdown; " +
			"for a URL: DNS, TCP, TLS, the POST, ...), each ok or failed with its detail and a hint. It starts each server it checks; " +
			"a project server nobody approved is listed as not approved and not started.",
		Annotations: acting("Check the configured servers", false, true),
	}, func(ctx context.Context, in doctorIn) (*DoctorResult, string, error) {
		if s.opts.Host.Doctor == nil {
			return nil, "", fmt.Errorf("doctor: %w (run sonde doctor --json in a shell)", ErrNoHostFunc)
		}
		r, err := s.opts.Host.Doctor(ctx, in.Server)
		if err != nil {
			return nil, "", fmt.Errorf("doctor: %s", textfmt.Escape(err.Error()))
		}
		r.clean()
		return r, r.Summary(), nil
	})
	addTool(s, &sdk.Tool{
		Name: "sessions_list",
		Description: "This server's sessions (session_start's, session_open's) and the sessions sonde tap recorded for real hosts " +
			"(what sonde sessions shows: id, label, server, start, live or ended, host process, calls, errors, late, unknown and duplicate answers), live ones first.",
		Annotations: readOnly("List sessions"),
	}, func(ctx context.Context, _ sessionsIn) (*SessionsList, string, error) {
		l := s.sessionsList()
		return l, l.Summary(), nil
	})
	addTool(s, &sdk.Tool{
		Name: "session_open",
		Description: "Attach to a live session sonde tap is recording for a real host: it becomes a session here, so session_frames, " +
			"session_pending, session_explain and session_stderr show it as it goes on, and session_call and session_request inject into it " +
			"as sonde inject does (the host never sees their answers). session_stop detaches (the host's session goes on).",
		Annotations: readOnly("Attach to a tapped session"),
	}, s.sessionOpen)
}

// sessionsList is sessions_list's answer.
func (s *Server) sessionsList() *SessionsList {
	l := &SessionsList{Sessions: []OwnSession{}, Tapped: []TappedSession{}}
	for _, sess := range s.sessions.list() {
		o := OwnSession{ID: sess.id, Label: sess.label, Kind: sess.kind, Started: sess.started}
		if _, ok := s.ownCapture(sess.id); ok {
			o.Resource = resourceURI(sess.id)
		}
		l.Sessions = append(l.Sessions, o)
	}
	if s.opts.Host.Tapped == nil {
		l.TappedProblem = "not available in this sonde mcp (sonde sessions lists them)"
		return l
	}
	tapped, err := s.opts.Host.Tapped(s.opts.Host.SessionsDir)
	if err != nil {
		l.TappedProblem = textfmt.Escape(err.Error())
	}
	if len(tapped) > maxTapped {
		l.Omitted, tapped = len(tapped)-maxTapped, tapped[:maxTapped]
	}
	for i := range tapped {
		cleanTapped(&tapped[i])
	}
	l.Tapped = append(l.Tapped, tapped...)
	return l
}

// ErrNotLive is session_open's error for a tapped session that ended.
var ErrNotLive = errors.New("not live")

// findTapped is the tapped session id names (exactly, or the only one it
// begins), unescaped as Host.Tapped gave it.
func (s *Server) findTapped(id string) (TappedSession, error) {
	if s.opts.Host.Tapped == nil {
		return TappedSession{}, fmt.Errorf("session_open: %w", ErrNoHostFunc)
	}
	all, err := s.opts.Host.Tapped(s.opts.Host.SessionsDir)
	if err != nil {
		return TappedSession{}, fmt.Errorf("session_open: the sessions folder: %s", textfmt.Escape(err.Error()))
	}
	var hits []TappedSession
	for _, t := range all {
		if t.ID == id {
			hits = []TappedSession{t}
			break
		}
		if id != "" && strings.HasPrefix(t.ID, id) {
			hits = append(hits, t)
		}
	}
	switch {
	case len(hits) == 0:
		return TappedSession{}, fmt.Errorf("session_open: %w %q: no tapped session has that id (sessions_list lists them)", ErrUnknownSession, textfmt.Escape(id))
	case len(hits) > 1:
		return TappedSession{}, fmt.Errorf("session_open: %q begins %d tapped sessions: give more of the id (sessions_list lists them)", textfmt.Escape(id), len(hits))
	case !hits[0].Live:
		return TappedSession{}, fmt.Errorf("session_open: %s is %w (its tap ended): read its recording with capture_lint, capture_stats or resources/read %s", textfmt.Escape(hits[0].ID), ErrNotLive, tappedURI(hits[0].ID))
	}
	return hits[0], nil
}

// sessionOpen is session_open: the tapped session followed into a
// session of this server's, its calls injected.
func (s *Server) sessionOpen(ctx context.Context, in openIn) (*OpenResult, string, error) {
	t, err := s.findTapped(in.ID)
	if err != nil {
		return nil, "", err
	}
	for _, sess := range s.sessions.list() {
		if p, ok := s.ownCapture(sess.id); ok && sess.kind == kindTapped && p == t.File {
			out := &OpenResult{Session: sess.id, Tapped: t, Resource: resourceURI(sess.id)}
			cleanTapped(&out.Tapped)
			return out, fmt.Sprintf("%s is already open as %s", out.Tapped.ID, sess.id), nil
		}
	}
	id, err := s.sessions.reserve()
	if err != nil {
		return nil, "", err
	}
	log := newEventLog()
	caughtUp, stop, err := followRecording(t.File, t.TapPID, log)
	if err != nil {
		s.sessions.release(id)
		return nil, "", fmt.Errorf("session_open: %s", textfmt.Escape(err.Error()))
	}
	path := t.File
	sess := newSession(sessionParts{ID: id, Label: "tapped " + textfmt.Escape(t.ID), Kind: kindTapped, Log: log, Close: stop, Owner: caller(ctx),
		Inject: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return s.inject(ctx, path, method, params)
		}})
	s.setCapture(id, path)
	if !s.sessions.put(sess) {
		s.setCapture(id, "")
		return nil, "", errors.New("sonde mcp is shutting down")
	}
	s.sessionAdded(sess)
	select {
	case <-caughtUp:
	case <-time.After(openWait):
	case <-ctx.Done():
	}
	out := &OpenResult{Session: id, Tapped: t, Resource: resourceURI(id)}
	log.newestFirst(func(client.Event) bool { out.Events++; return true })
	cleanTapped(&out.Tapped)
	return out, fmt.Sprintf("%s attached as %s (%d events so far): session_frames, session_pending, session_explain work on it; session_call injects", out.Tapped.ID, id, out.Events), nil
}

// kindTapped is the kind of a session session_open attached.
const kindTapped = "tapped"

// inject sends one request into the tapped session recorded at path.
func (s *Server) inject(ctx context.Context, path, method string, params json.RawMessage) (json.RawMessage, error) {
	if s.opts.Host.Inject == nil {
		return nil, fmt.Errorf("inject: %w (sonde inject does it from a shell)", ErrNoHostFunc)
	}
	timeout := injectTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	return s.opts.Host.Inject(ctx, path, method, params, timeout)
}
