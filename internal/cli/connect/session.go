package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/mcp"
)

// Session is a connected, initialized client and what runs beside it: the
// --record capture, the --trace printer, and the secrets the run learns
// (--oauth tokens), which its captures redact.
type Session struct {
	// Client is the session's client, initialized (after --reconnect, the
	// new one).
	Client *client.Client

	env     *cmdutil.Env
	flags   *Flags
	target  *Target
	secrets *SecretSink
	trace   *tracer
	late    *lateWatch        // late answers on stderr; --linger
	rec     *capture.Recorder // the --record capture, closed with the session
	follow  func(*client.Client)
	otlp    *Telemetry // --otlp-endpoint, --traceparent (nil: none)
	held    *Held      // --break, --breaks (nil: none)
	closed  bool
}

// Open starts (or dials) the target's server, runs the handshake and
// returns the session, with the --record capture started and the --trace
// printer following its client. The caller must Close it. The server's name
// and version are recorded in env.
func Open(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target) (*Session, error) {
	return OpenFollowing(ctx, env, f, t, nil)
}

// OpenFollowing is Open with follow (if not nil) called with each client
// the session starts, before it connects: a subscription made there sees
// every event, the handshake's and those of a start that fails included.
func OpenFollowing(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target, follow func(*client.Client)) (*Session, error) {
	return open(ctx, env, f, t, follow, nil)
}

// OpenHeld is Open with the session's frames offered to h's breakpoints
// (Open when h is nil). The caller closes h after the session.
func OpenHeld(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target, h *Held) (*Session, error) {
	return open(ctx, env, f, t, nil, h)
}

func open(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target, follow func(*client.Client), h *Held) (*Session, error) {
	env.HideSecrets(t.Hide...)
	s := &Session{env: env, flags: f, target: t, secrets: &SecretSink{}, follow: follow, held: h}
	c, tr, err := s.start(ctx, true)
	if err != nil {
		return nil, err
	}
	s.Client, s.trace = c, tr
	return s, nil
}

// Run opens a session on the target, runs fn on it and closes it: the
// prologue and epilogue of a command that talks to a server. With --json, a
// failure that has an error code (opening the session, or fn's) is also
// reported on stdout (cmdutil.JSONFailure), before the session closes.
func Run(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target, fn func(ctx context.Context, s *Session) error) error {
	return RunHeld(ctx, env, f, t, nil, fn)
}

// RunHeld is Run with the session's frames offered to h's breakpoints (Run
// when h is nil). The caller closes h after it.
func RunHeld(ctx context.Context, env *cmdutil.Env, f *Flags, t *Target, h *Held, fn func(ctx context.Context, s *Session) error) error {
	s, err := OpenHeld(ctx, env, f, t, h)
	if err != nil {
		return env.JSONFailure(f.JSON, err)
	}
	defer s.Close()
	return env.JSONFailure(f.JSON, fn(ctx, s))
}

// start creates a client, connects it and runs the handshake. The first
// start of a session creates the --record capture; a reconnect
// (--reconnect) follows its new client into the same file. On failure
// everything start created is closed.
func (s *Session) start(ctx context.Context, first bool) (*client.Client, *tracer, error) {
	f, t := s.flags, s.target
	opts, cfg, err := ClientOptions(f, t)
	if err != nil {
		return nil, nil, err
	}
	dial, _, _, err := Dial(f, t, cfg, OAuthHooks{Prompt: PrintPrompt(s.env.Err, f), Grant: s.env.SetAuthGrant}, s.secrets)
	if err != nil {
		return nil, nil, err
	}
	dial = s.held.dial(dial)
	if f.Insecure {
		fmt.Fprintln(s.env.Err, "sonde: warning: --insecure: the server's TLS certificate is not verified")
	}
	if first {
		if s.otlp, err = OpenTelemetry(ctx, f, t, s.secrets); err != nil {
			return nil, nil, err
		}
	}
	if first && f.Record != "" {
		if s.rec, err = startRecorder(f, t, s.secrets); err != nil {
			s.otlp.Close(s.env.Err)
			return nil, nil, err
		}
	}
	s.otlp.Client(&opts)
	c := client.New(opts)
	s.held.follow(c)
	if s.follow != nil {
		s.follow(c)
	}
	if s.rec != nil {
		s.rec.Follow(c)
	}
	s.otlp.Follow(c)
	var tr *tracer
	fail := func(err error) (*client.Client, *tracer, error) {
		c.Close()
		if tr != nil {
			tr.wait()
		}
		if first && s.rec != nil {
			ReportCapture(s.env.Err, f.Record, s.rec.Close())
			s.rec = nil
		}
		if first {
			s.otlp.Close(s.env.Err)
		}
		return nil, nil, err
	}
	if !cmdutil.LiveFrom(ctx).Add(c) {
		return fail(&client.Error{Code: client.CodeAborted, Message: "interrupted before the server started"})
	}
	if f.Trace {
		red, err := redactor(f, t, s.secrets)
		if err != nil {
			return fail(err)
		}
		tr = startTracer(c, s.env.Err, red, f)
	}
	late := startLateWatch(c, s.env.Err)
	err = c.Connect(dial)
	if err == nil {
		var res *mcp.InitializeResult
		if res, err = c.Initialize(ctx); err == nil {
			s.env.SetServer(strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version))
		}
	}
	if err != nil {
		c, tr, err := fail(err)
		late.wait() // fail closed its client
		return c, tr, err
	}
	// A reconnect's old watch ends with the old client (Retry closes it).
	s.late = late
	return c, tr, nil
}

// Retry runs op; when it fails with MCP_SESSION_EXPIRED and --reconnect is
// set, it starts a new session (a new initialize) and runs op once more.
func (s *Session) Retry(ctx context.Context, op func(c *client.Client) error) error {
	err := op(s.Client)
	if !s.flags.Reconnect || !errors.Is(err, client.ErrExpired) {
		return err
	}
	fmt.Fprintln(s.env.Err, "sonde: "+err.Error()+"; --reconnect: starting a new session")
	c, tr, err := s.start(ctx, false)
	if err != nil {
		return err
	}
	// The old client ends; the capture goes on in the same file.
	s.Client.Close()
	if s.trace != nil {
		s.trace.wait()
	}
	s.Client, s.trace = c, tr
	return op(s.Client)
}

// Close closes the client, waits for the --trace printer to finish, and
// closes the capture, saying where it went. It may be called more than
// once.
func (s *Session) Close() {
	if s.closed {
		return
	}
	s.closed = true
	if s.late != nil {
		s.late.linger(s.flags.Linger)
	}
	s.Client.Close()
	if s.late != nil {
		s.late.wait()
	}
	if s.trace != nil {
		s.trace.wait()
	}
	if s.rec != nil {
		ReportCapture(s.env.Err, s.flags.Record, s.rec.Close())
	}
	s.otlp.Close(s.env.Err)
}
