package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// DefaultGrace is how long, after stdin's end, lines still scheduled may be
// written before Serve returns.
const DefaultGrace = 2 * time.Second

// Options configure Serve.
type Options struct {
	// Speed divides the recorded delays: 2 plays twice as fast, 0.5 half as
	// fast. 0 writes every line at once (no pacing).
	Speed float64
	// Log gets one line per message received: how it was answered (nil:
	// nothing is logged).
	Log io.Writer
	// Grace bounds the wait for scheduled lines after stdin's end (default
	// DefaultGrace).
	Grace time.Duration
	// MaxLineBytes caps one input line (default
	// transport.DefaultMaxLineBytes); a longer line gets -32600.
	MaxLineBytes int
	// Stderr gets the recorded server's stderr, at its points (nil: it is
	// not played).
	Stderr io.Writer
	// Strict answers only recorded requests (and ping, and initialize from
	// the session record): no synthesized housekeeping, and list methods
	// matched like any other.
	Strict bool
	// Loose answers a tools/call or prompts/get with other arguments (or a
	// resources request with other params) with a recorded answer of the
	// same tool, prompt or resource (--loose). Without it such a request
	// gets the error CodeUnmatched naming the nearest recorded request and
	// the paths where the params differ: a mock that gives the answer of
	// other arguments makes a client's test pass falsely. It never applies
	// under Strict.
	Loose bool
	// Repeat says what a request gets once the recorded answers it matches
	// were all played ("": RepeatCycle).
	Repeat Repeat
	// Session serves only the recorded session N (1-based: a restart record
	// starts the next); 0 serves every session as one pool.
	Session int
	// LoopbackOnly (HTTP) refuses, with 403, a request whose Host or Origin
	// is not a loopback name or address: a web page cannot reach the mock
	// through DNS rebinding.
	LoopbackOnly bool
	// Wrap (HTTP), when set, stands between each session's client and its
	// mock: it gets where the client's lines go (the mock's input) and
	// where the mock's lines go (the session's streams) and returns the
	// writers to use instead, and a function run when the session ends
	// (sonde replay --serve --listen --fault puts the fault rules there).
	Wrap func(toMock, toClient io.Writer) (io.Writer, io.Writer, func())
	// Hold, when set, judges each message of both ways against its
	// breakpoints (hold.go, docs/breakpoints.md "replay --serve"): the
	// client's before the mock answers it, the mock's before the client
	// gets it. Over HTTP it is shared by every session.
	Hold *hold.Engine
}

// ExitError is what Serve returns when it played the recorded server's own
// exit: the mock should end with Code.
type ExitError struct{ Code int }

// Error says where the mock stopped.
func (e *ExitError) Error() string {
	return fmt.Sprintf("the recorded server exited here with status %d", e.Code)
}

// Serve plays s as an MCP server: it reads JSON-RPC messages from in (one
// per line) and writes the recorded answers to out, until in ends (then it
// lets what is scheduled finish, at most Options.Grace) or ctx is done. A
// request is matched with Script.Match; its recorded lines are written
// after their recorded delays (scaled by Options.Speed), its response with
// the caller's id (an initialize's protocolVersion follows the client when
// the recorded server answered the client's version). A request nothing
// matches is answered by the mock when it is housekeeping (ping, and unless
// Options.Strict logging/setLevel, subscriptions, list methods, completion
// and server/discover, from the recorded capabilities; initialize from the
// session record when the capture has none), else gets the error
// CodeUnmatched naming the nearest recorded request. A line that is not JSON gets -32700, one that is not a
// valid request -32600, both with id null (or the request's id when it
// could be read). The recorded server's stderr goes to Options.Stderr, and
// its own exit, once reached, ends Serve with an *ExitError. Otherwise it
// returns nil at the end of in, ctx's error when ctx ended first, or the
// error of a write.
func Serve(ctx context.Context, s *Script, in io.Reader, out io.Writer, o Options) error {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	s, err := s.session(o.Session, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &player{ctx: ctx, out: out, stderr: o.Stderr, speed: o.Speed, fail: cancel, hold: o.Hold}
	p.handle = func(line []byte) { s.handle(p, line, o.Log) }
	defer p.wg.Wait()
	defer p.end()
	readDone := make(chan struct{})
	defer close(readDone)
	lines := readLines(in, o.MaxLineBytes, readDone)

	p.play(&s.Start, nil, nil, nil)
	for {
		var it lineItem
		select {
		case <-ctx.Done():
			if err := p.writeErr(); err != nil {
				return err
			}
			return ctx.Err()
		case it = <-lines:
		}
		var tooLong *transport.LineTooLongError
		switch {
		case errors.As(it.err, &tooLong):
			fmt.Fprintf(o.Log, "sonde replay: input line longer than %d bytes: answered -32600\n", tooLong.Limit)
			p.reply(jsonrpc.ID{}, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("line longer than %d bytes", tooLong.Limit)})
			continue
		case it.err == nil, errors.Is(it.err, io.ErrUnexpectedEOF):
			p.fromClient(it.line)
			if it.err == nil {
				continue
			}
		}
		if it.err != nil && !errors.Is(it.err, io.EOF) && !errors.Is(it.err, io.ErrUnexpectedEOF) {
			fmt.Fprintf(o.Log, "sonde replay: reading stdin: %v\n", it.err)
		}
		p.drain(o.Grace, cancel, o.Log)
		return p.writeErr()
	}
}

// lineItem is one line read from the input, or the error that ended it.
type lineItem struct {
	line []byte
	err  error
}

// readLines reads in line by line (lines of at most maxBytes bytes) in a
// goroutine, until an error that ends the input or until done closes.
func readLines(in io.Reader, maxBytes int, done <-chan struct{}) <-chan lineItem {
	lines := make(chan lineItem)
	go func() {
		defer close(lines)
		lr := transport.NewLineReader(in, maxBytes)
		for {
			line, err := lr.ReadLine()
			select {
			case lines <- lineItem{line, err}:
			case <-done:
				return
			}
			if err != nil && !errors.As(err, new(*transport.LineTooLongError)) {
				return
			}
		}
	}()
	return lines
}

// drain lets what is scheduled finish at the end of the input, within the
// grace (then cancels it).
func (p *player) drain(grace time.Duration, cancel context.CancelFunc, log io.Writer) {
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		fmt.Fprintf(log, "sonde replay: stdin ended; lines still scheduled after %v were dropped\n", grace)
		cancel()
		<-done
	case <-p.ctx.Done():
		<-done
	}
}

// handle answers one input line.
func (s *Script) handle(p *player, line []byte, log io.Writer) {
	msg, err := jsonrpc.Decode(line)
	if err != nil {
		var de *jsonrpc.DecodeError
		code := jsonrpc.CodeInvalidRequest
		if errors.As(err, &de) && de.Class == jsonrpc.ClassNotJSON {
			code = jsonrpc.CodeParseError
		}
		id := jsonrpc.ID{}
		if msg.Kind == jsonrpc.KindRequest {
			id = msg.ID
		}
		text := "invalid request: " + err.Error()
		if code == jsonrpc.CodeParseError {
			text = "parse error: the line is not JSON"
		}
		fmt.Fprintf(log, "sonde replay: bad input line (%s): answered %d\n", text, code)
		p.reply(id, nil, &jsonrpc.Error{Code: int64(code), Message: "sonde replay: " + text})
		return
	}
	switch msg.Kind {
	case jsonrpc.KindRequest:
		s.request(p, msg, log)
	case jsonrpc.KindNotification:
		if a := s.notification(msg.Method); a != nil {
			p.play(a, nil, nil, nil)
		} else {
			fmt.Fprintf(log, "sonde replay: %s: not recorded, accepted (synthesized)\n", msg.Method)
		}
	case jsonrpc.KindResponse:
		if a := s.answer(msg.ID); a != nil {
			p.play(a, nil, nil, nil)
		} else {
			fmt.Fprintf(log, "sonde replay: response id %s answers no recorded server request (ignored)\n", msg.ID)
		}
	}
}

// request answers a request: the matched recorded exchange, or an error.
func (s *Script) request(p *player, msg jsonrpc.Message, log io.Writer) {
	idJSON, _ := msg.ID.MarshalJSON()
	ex, how := s.Match(msg.Method, msg.Params)
	if ex != nil {
		_, _, token := canonical(msg.Method, msg.Params)
		note := ""
		if !ex.answered() {
			note = " (the capture has no response to it: none is sent)"
		}
		if (how == MatchLoose || how == MatchNewest) && msg.Method != mcp.MethodInitialize {
			if paths := paramDiff(ex.Params, msg.Params); len(paths) > 0 {
				note = ", params differ at " + strings.Join(paths, ", ") + note
			}
		}
		var version []byte
		if msg.Method == mcp.MethodInitialize {
			asked, recorded := initializeVersions(msg.Params, ex)
			if v := s.handshakeVersion(asked, recorded); v != "" {
				version, _ = json.Marshal(v)
				note += fmt.Sprintf(", protocolVersion %s instead of the recorded %s (synthesized)", v, recorded)
			}
		}
		fmt.Fprintf(log, "sonde replay: %s id %s: recorded id %s (%s match%s)\n", msg.Method, msg.ID, ex.ID, how, note)
		p.play(&ex.Anchor, idJSON, token, version)
		return
	}
	// Under --repeat fail, recorded answers all played are not replaced by
	// a synthesized one.
	if res, why, ok := s.synthesize(msg.Method, msg.Params); ok && (!s.exhausted || msg.Method == mcp.MethodPing) {
		fmt.Fprintf(log, "sonde replay: %s id %s: not recorded, answered %s (synthesized)\n", msg.Method, msg.ID, why)
		p.reply(msg.ID, res, nil)
		return
	}
	e := s.unmatchedError(msg.Method, msg.Params)
	fmt.Fprintf(log, "sonde replay: %s id %s: no match: answered %d\n", msg.Method, msg.ID, e.Code)
	p.reply(msg.ID, nil, e)
}

// answered reports whether the recorded request got a response.
func (ex *Exchange) answered() bool {
	for _, l := range ex.Lines {
		if l.Kind == Response {
			return true
		}
	}
	return false
}

// initResult is an initialize result for a capture that has no recorded
// initialize (a recording started mid-session, or a modern-era session with
// server/discover): the client's version when the recorded server answered
// it, else the recorded legacy-era one (the session record's, else the
// newest of the recorded discovery's), else the client's; the recorded
// capabilities and server (from the session record, else the discovery's
// _meta).
func (s *Script) initResult(params json.RawMessage) json.RawMessage {
	var p mcp.InitializeParams
	_ = json.Unmarshal(params, &p)
	versions := s.versions()
	version := ""
	switch {
	case p.ProtocolVersion != "" && versions[p.ProtocolVersion]:
		version = p.ProtocolVersion
	case s.ProtocolVersion != "" && s.ProtocolVersion < mcp.ModernVersion:
		version = s.ProtocolVersion
	default:
		for v := range versions {
			if v < mcp.ModernVersion && v > version {
				version = v
			}
		}
	}
	if version == "" {
		version = p.ProtocolVersion
	}
	if version == "" {
		version = mcp.LatestVersion
	}
	info := mcp.Implementation{Name: s.ServerName, Version: s.ServerVersion}
	if info.Name == "" {
		var d struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if res := s.recordedResult(mcp.MethodServerDiscover); res != nil && json.Unmarshal(res, &d) == nil {
			_ = json.Unmarshal(d.Meta[mcp.MetaServerInfo], &info)
		}
	}
	if info.Name == "" {
		info = mcp.Implementation{Name: "sonde-replay", Version: "0"}
	}
	b, _ := json.Marshal(map[string]any{
		"protocolVersion": version,
		"capabilities":    s.capabilities(),
		"serverInfo":      info,
	})
	return b
}

// player writes lines: one at a time, each in a single write.
type player struct {
	ctx    context.Context
	out    io.Writer
	stderr io.Writer
	speed  float64
	fail   context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex
	err error // a write failed, or the recorded exit was played (*ExitError)

	// With breakpoints (Options.Hold): handle answers one client line
	// (under hmu: a held line let go comes from another goroutine);
	// ended, under mu, says Serve returned (a decision after it fails).
	hold   *hold.Engine
	handle func([]byte)
	hmu    sync.Mutex
	ended  bool
}

// routedWriter is an output that takes, with each line played for a
// request, the caller's id of that request (over HTTP: the stream it goes
// on).
type routedWriter interface {
	WriteFor(id, line []byte) (int, error)
}

// write writes one line (a newline is added), unless a breakpoint holds
// it; route is the caller's id of the request it was played for (nil:
// none).
func (p *player) write(raw, route []byte) {
	if p.offer(raw, route) {
		return
	}
	_ = p.writeNow(raw, route)
}

// writeNow writes one line. A line no HTTP stream takes (errNoStream) is
// returned, not fatal; any other error ends the session.
func (p *player) writeNow(raw, route []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.ended {
		return errEnded
	}
	buf := make([]byte, 0, len(raw)+1)
	buf = append(append(buf, raw...), '\n')
	var err error
	if rw, ok := p.out.(routedWriter); ok {
		_, err = rw.WriteFor(route, buf)
	} else {
		_, err = p.out.Write(buf)
	}
	if errors.Is(err, errNoStream) {
		return err
	}
	if err != nil {
		p.err = fmt.Errorf("sonde replay: write: %w", err)
		p.fail()
	}
	return p.err
}

// exitWith plays the recorded exit: nothing more is written, and Serve
// returns an *ExitError.
func (p *player) exitWith(code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = &ExitError{Code: code}
	}
	p.fail()
}

func (p *player) writeErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// reply writes a response of the mock's own.
func (p *player) reply(id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) {
	var b []byte
	if e != nil {
		b, _ = jsonrpc.EncodeError(id, e)
	} else {
		b, _ = jsonrpc.EncodeResult(id, result)
	}
	p.write(b, nil)
}

// play writes an anchor's lines after their delays, from now: responses
// with id and result.protocolVersion set to version, progress notifications
// with token (each when not nil).
func (p *player) play(a *Anchor, id, token, version []byte) {
	if len(a.Lines) == 0 {
		return
	}
	start := time.Now()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for _, l := range a.Lines {
			if p.speed > 0 {
				if wait := time.Until(start.Add(scaled(l.Offset, p.speed))); wait > 0 {
					t := time.NewTimer(wait)
					select {
					case <-t.C:
					case <-p.ctx.Done():
						t.Stop()
						return
					}
				}
			}
			if p.ctx.Err() != nil {
				return
			}
			raw := l.Raw
			switch {
			case l.Kind == Exit:
				p.exitWith(l.Code)
				return
			case l.Kind == Stderr:
				p.mu.Lock()
				p.stderr.Write(raw)
				p.mu.Unlock()
				continue
			case l.Kind == Response && id != nil:
				raw, _ = RewriteID(raw, id)
				if version != nil {
					raw, _ = RewriteResultMember(raw, "protocolVersion", version)
				}
			case l.Kind == Progress && token != nil:
				raw, _ = RewriteToken(raw, token)
			}
			p.write(raw, id)
		}
	}()
}

// scaled is a recorded delay divided by speed, at most capture.MaxSpan (a
// slow speed cannot overflow a Duration into a negative wait).
func scaled(d time.Duration, speed float64) time.Duration {
	f := float64(d) / speed
	if f >= float64(capture.MaxSpan) || f != f {
		return capture.MaxSpan
	}
	return time.Duration(max(f, 0))
}
