package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// Caps of what one answer carries.
const (
	maxBody      = 64 << 10  // bytes of one frame's body, result or text
	maxAnswer    = 256 << 10 // bytes of the bodies of one answer together
	maxLine      = 4096      // bytes of one stderr line
	stderrHead   = 20        // stderr lines a failed start shows
	subscription = 4096      // events a session's subscription buffers
)

// registerSessionTools registers the session_* tools: session_start,
// session_call, session_request, session_pending, session_frames,
// session_stderr, session_explain, session_stop.
func (s *Server) registerSessionTools() {
	addTool(s, &sdk.Tool{Name: "session_start", Description: "Start an MCP server (a command allowed by sonde mcp --allow, or a configured host server by name) or connect to one by URL, run the handshake, and return the session id the other session_* tools take, with the server's info, protocol version and capabilities. On failure: the error and the head of the server's stderr.",
		Annotations: acting("Start a session", false, false)}, s.sessionStart)
	addTool(s, &sdk.Tool{Name: "session_stop", Description: "End a session: close the connection and stop the server's process.",
		Annotations: acting("Stop a session", true, true)}, s.sessionStop)
	addTool(s, &sdk.Tool{Name: "session_stderr", Description: "The last lines the session's server wrote on stderr (escaped; secrets redacted).",
		Annotations: readOnly("Server stderr")}, s.sessionStderr)
	s.registerExchangeTools()
	s.registerInspectTools()
}

// serverInfo is the target server's name and version.
type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

// errInfo is a failure as sonde's client reports it.
type errInfo struct {
	Code    string `json:"code,omitempty" jsonschema:"sonde's stable error code (docs/errors.md), e.g. MCP_TIMEOUT, MCP_SPAWN"`
	Message string `json:"message"`
}

type startOut struct {
	Session      string      `json:"session,omitempty" jsonschema:"the session id: give it to the other session_* tools"`
	OK           bool        `json:"ok" jsonschema:"the handshake completed"`
	Launched     string      `json:"launched" jsonschema:"what was started or reached"`
	Server       *serverInfo `json:"server,omitempty"`
	Protocol     string      `json:"protocol,omitempty" jsonschema:"the negotiated protocol version"`
	Era          string      `json:"era,omitempty" jsonschema:"legacy (initialize) or modern (server/discover)"`
	Capabilities []string    `json:"capabilities,omitempty" jsonschema:"the server's capabilities, as dotted paths (tools, tools.listChanged, resources.subscribe...)"`
	Instructions string      `json:"instructions,omitempty"`
	Error        *errInfo    `json:"error,omitempty"`
	StderrHead   []string    `json:"stderrHead,omitempty" jsonschema:"on failure: the first lines of the server's stderr"`
}

func (s *Server) sessionStart(ctx context.Context, in startIn) (startOut, string, error) {
	l, label, err := s.launch(in)
	if err != nil {
		return startOut{}, "", err
	}
	id, err := s.sessions.reserve()
	if err != nil {
		return startOut{}, "", err
	}
	l.Record = s.recordTo(id) // r29-tools: resources.go
	log := newEventLog()
	var done <-chan struct{}
	follow := func(c *client.Client) {
		if done == nil { // the first client only
			done = log.follow(c.Subscribe(subscription))
		}
	}
	conn, err := s.opts.Open(ctx, l, follow)
	if err != nil {
		s.sessions.release(id)
		if done != nil {
			<-done // Open closed the client: its events are all in
		}
		return s.startFailed(label, log, err)
	}
	c := conn.Client()
	sess := newSession(sessionParts{ID: id, Label: label, Kind: "started", Client: c, Log: log, Redact: conn.Redactor(), Owner: caller(ctx),
		Close: func() {
			conn.Close()
			if done != nil {
				<-done
			}
		}})
	if !s.sessions.put(sess) {
		return startOut{}, "", errors.New("sonde mcp is shutting down")
	}
	s.sessionAdded(sess) // r29-tools: resources.go
	out := startOut{Session: id, OK: true, Launched: label, Era: string(c.Era())}
	waitHandshake(ctx, log)
	s.handshakeFacts(sess, &out)
	name := "server"
	if out.Server != nil {
		name = strings.TrimSpace(out.Server.Name + " " + out.Server.Version)
	}
	return out, fmt.Sprintf("session %s: %s (protocol %s), %d capabilities; call its tools with session_call", id, name, out.Protocol, len(out.Capabilities)), nil
}

// startFailed is session_start's answer when the server did not start
// or the handshake failed.
func (s *Server) startFailed(label string, log *eventLog, err error) (startOut, string, error) {
	out := startOut{Launched: label, Error: errorInfo(nil, err)}
	lines, _ := log.stderrTail(logStderrLines)
	if len(lines) > stderrHead {
		lines = lines[:stderrHead]
	}
	for _, ln := range lines {
		out.StderrHead = append(out.StderrHead, serverString(nil, ln, maxLine))
	}
	msg := fmt.Sprintf("session_start failed: %s", out.Error.Message)
	if len(out.StderrHead) > 0 {
		msg += "\nthe server's stderr began:\n  " + strings.Join(out.StderrHead, "\n  ")
	}
	msg += "\nfix the server (or the command) and call session_start again"
	return out, "", errors.New(msg)
}

// waitHandshake waits (a little) until the log holds the handshake's
// answer: Open returns once the client has it, the log's feed may not.
func waitHandshake(ctx context.Context, log *eventLog) {
	deadline := time.NewTimer(settleWait)
	defer deadline.Stop()
	for {
		ch := log.wait()
		var have bool
		log.withRequests(func(r *requests) { have = r.hsResult != nil })
		if have {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// handshakeFacts fills out from the handshake's answer in the log.
func (s *Server) handshakeFacts(sess *session, out *startOut) {
	var raw json.RawMessage
	var method string
	sess.log.withRequests(func(r *requests) { raw, method = r.hsResult, r.hsMethod })
	var caps json.RawMessage
	switch method {
	case mcp.MethodInitialize:
		var res mcp.InitializeResult
		if json.Unmarshal(raw, &res) == nil {
			out.Protocol = serverString(sess.redact, res.ProtocolVersion, 64)
			out.Server = &serverInfo{Name: serverString(sess.redact, res.ServerInfo.Name, 256), Version: serverString(sess.redact, res.ServerInfo.Version, 256), Title: serverString(sess.redact, res.ServerInfo.Title, 256)}
			out.Instructions = serverString(sess.redact, res.Instructions, maxBody)
			caps = res.Capabilities
		}
	case mcp.MethodServerDiscover:
		if d := sess.client.Discovered(); d != nil {
			out.Protocol = mcp.ModernVersion
			out.Instructions = serverString(sess.redact, d.Instructions, maxBody)
			caps = d.Capabilities
			var meta struct {
				ServerInfo mcp.Implementation `json:"serverInfo"`
			}
			if json.Unmarshal(raw, &meta) == nil && meta.ServerInfo.Name != "" {
				out.Server = &serverInfo{Name: serverString(sess.redact, meta.ServerInfo.Name, 256), Version: serverString(sess.redact, meta.ServerInfo.Version, 256)}
			}
		}
	}
	out.Capabilities = capabilityPaths(caps, sess)
}

// capabilityPaths flattens a capabilities object into dotted paths of
// its keys, sorted, escaped.
func capabilityPaths(raw json.RawMessage, sess *session) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	var out []string
	for k, v := range top {
		out = append(out, serverString(sess.redact, k, 128))
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) == nil {
			for sk, sv := range sub {
				if string(sv) != "false" {
					out = append(out, serverString(sess.redact, k+"."+sk, 128))
				}
			}
		}
		if len(out) > 200 {
			break
		}
	}
	sort.Strings(out)
	return out
}

// errorInfo is err as the agent reads it: its code, and its message
// redacted and escaped.
func errorInfo(sess *session, err error) *errInfo {
	if err == nil {
		return nil
	}
	var red = sessRedactor(sess)
	e := &errInfo{Message: serverString(red, err.Error(), maxLine)}
	var ce *client.Error
	if errors.As(err, &ce) {
		e.Code = string(ce.Code)
	}
	return e
}

type sessionIn struct {
	Session string `json:"session" jsonschema:"the session id session_start returned"`
}

type stopOut struct {
	Session string `json:"session"`
	Stopped bool   `json:"stopped"`
	Exit    string `json:"exit,omitempty" jsonschema:"how the server's process ended, when sonde saw it"`
}

func (s *Server) sessionStop(_ context.Context, in sessionIn) (stopOut, string, error) {
	sess := s.sessions.remove(in.Session)
	if sess == nil {
		_, err := s.sessions.get(in.Session)
		return stopOut{}, "", err
	}
	sess.close()
	out := stopOut{Session: sess.id, Stopped: true, Exit: lastExit(sess)}
	summary := "session " + sess.id + " stopped"
	if out.Exit != "" {
		summary += ": " + out.Exit
	}
	return out, summary, nil
}

// lastExit says how the session's process ended ("" when it did not, or
// sonde did not see it).
func lastExit(sess *session) string {
	exit := ""
	sess.log.newestFirst(func(ev client.Event) bool {
		if ev.Kind == client.EvProcess && ev.Proc != nil && ev.Proc.What == client.ProcExit && ev.Proc.Exit != nil {
			exit = serverString(sess.redact, ev.Proc.Exit.What()+" ("+ev.Proc.Exit.Status()+")", maxLine)
			return false
		}
		return true
	})
	return exit
}

type stderrIn struct {
	Session string `json:"session" jsonschema:"the session id session_start returned"`
	Lines   int    `json:"lines,omitempty" jsonschema:"how many of the last lines (default 50, at most 2000)"`
}

type stderrOut struct {
	Session string   `json:"session"`
	Lines   []string `json:"lines"`
	Dropped uint64   `json:"dropped,omitempty" jsonschema:"older lines no longer held"`
	Cut     bool     `json:"cut,omitempty" jsonschema:"the answer's size cap left older lines out"`
}

func (s *Server) sessionStderr(_ context.Context, in stderrIn) (stderrOut, string, error) {
	sess, err := s.sessions.get(in.Session)
	if err != nil {
		return stderrOut{}, "", err
	}
	n := in.Lines
	if n <= 0 {
		n = 50
	}
	n = min(n, logStderrLines)
	lines, dropped := sess.log.stderrTail(n)
	out := stderrOut{Session: sess.id, Lines: []string{}, Dropped: dropped}
	size := 0
	for i := len(lines) - 1; i >= 0; i-- { // the newest first, into the budget
		t := serverString(sess.redact, lines[i], maxLine)
		if size += len(t); size > maxAnswer {
			out.Cut = true
			break
		}
		out.Lines = append(out.Lines, t)
	}
	for i, j := 0, len(out.Lines)-1; i < j; i, j = i+1, j-1 {
		out.Lines[i], out.Lines[j] = out.Lines[j], out.Lines[i]
	}
	return out, fmt.Sprintf("%d stderr lines of session %s", len(out.Lines), sess.id), nil
}

// sessRedactor is sess's redactor (nil for no session).
func sessRedactor(sess *session) *capture.Redactor {
	if sess == nil {
		return nil
	}
	return sess.redact
}

// since formats a duration for people, rounded.
func since(d time.Duration) string { return d.Round(time.Millisecond).String() }
