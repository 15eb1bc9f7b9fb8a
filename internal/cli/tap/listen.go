package tap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	coretap "github.com/sonde-mcp/sonde/tap"
)

// shutdownGrace is how long requests in flight (SSE streams among them)
// may go on after a signal before their connections are closed.
const shutdownGrace = 2 * time.Second

// RunListen is `sonde tap --listen ADDR --target URL`: an HTTP reverse
// proxy in front of the server at URL, recording what goes by, until
// SIGINT or SIGTERM.
func RunListen(env *cmdutil.Env, o *Options) error {
	lp, err := validateListen(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &client.Error{Code: client.CodeSpawn, Message: fmt.Sprintf("sonde tap: listen on %s: %v", o.Listen, err), Err: err}
	}
	if !lp.loopback {
		fmt.Fprintf(env.Err, "sonde tap: warning: listening on %s, which is not loopback: anyone who can reach it can use %s through the tap\n", ln.Addr(), o.Target)
	}

	tel, err := startTelemetry(o, lp.red)
	if err != nil {
		ln.Close()
		return err
	}
	signals, stopSignals := o.Signals, func() {}
	if signals == nil {
		signals, stopSignals = notifySignals()
	}
	defer stopSignals()

	t := &httpTap{env: env, o: o, listenPlan: lp, ln: ln, tel: tel}
	obs, rec, recPath := startRecording(env, o, lp.label, capture.Options{Transport: "http", URL: coretap.RedactURL(lp.target), Redact: lp.red},
		fmt.Sprintf("sonde tap: session %q, HTTP tap on %s for %s, tap pid %d", lp.label, ln.Addr(), coretap.RedactURL(lp.target), os.Getpid()))
	t.obs = observe(tel, obs)

	noteFaults(t.obs, lp.faults)
	popts := coretap.ProxyOptions{
		Target: lp.target, Observer: t.obs, MaxMessageBytes: o.MaxLineBytes, LoopbackOnly: !o.AllowRemote, AllowOrigins: o.AllowOrigins, Log: env.Err, Faults: lp.faults,
		SessionIdle: o.SessionIdle, MaxSessions: o.MaxSessions,
	}
	if recPath != "" && o.Record == "" {
		// In the sessions folder, each HTTP session is a recording of its
		// own; this one keeps what belongs to none.
		popts.Sessions = t.openSession
		popts.SessionEnded = t.endSession
	}
	t.armBreaks(&popts, recPath != "" && o.Record == "")
	t.proxy = coretap.NewProxy(popts)
	*lp.proxy = t.proxy
	defer lp.breaks.Close()
	if recPath != "" && o.Record == "" {
		ctl := &control{faults: lp.faults, obs: t.obs, breaks: t.breaks}
		if lp.faults == nil {
			ctl.inj = t.proxy
		}
		if stop := serveInjector(ctl, socketPath(recPath), env.Err); stop != nil {
			defer stop()
		}
	}
	serveErr := t.serve(signals, recPath)
	t.stop()
	endObservation(env, t.obs, rec, recPath, tel)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("sonde tap: %s", strings.TrimSpace(serveErr.Error()))
	}
	return nil
}

// listenPlan is what sonde tap --listen's flags come to.
type listenPlan struct {
	red      *capture.Redactor
	faults   *chaos.Engine
	target   *url.URL
	loopback bool // --listen is a loopback address
	label    string
	// breaks are --break's; their steps are noted through *proxy, once
	// it is set (before anything is held).
	breaks *hold.Engine
	proxy  **coretap.Proxy
}

// validateListen checks sonde tap --listen's flags (making a port alone
// in o.Listen a loopback address) and says what they come to.
func validateListen(o *Options) (listenPlan, error) {
	if o.Listen == "" || o.Target == "" {
		return listenPlan{}, cmdutil.Usagef("tap --listen ADDR needs --target URL, and --target needs --listen")
	}
	red, faults, err := common(o)
	if err != nil {
		return listenPlan{}, err
	}
	lp := listenPlan{red: red, faults: faults, proxy: new(*coretap.Proxy)}
	if lp.breaks, err = listenBreaks(&o.Break, lp.proxy); err != nil {
		return listenPlan{}, err
	}
	target, err := url.Parse(o.Target)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return listenPlan{}, cmdutil.Usagef(fmt.Sprintf("--target %q: want an http:// or https:// URL", o.Target))
	}
	if _, err := strconv.ParseUint(o.Listen, 10, 16); err == nil {
		o.Listen = net.JoinHostPort("127.0.0.1", o.Listen) // a port alone: loopback
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return listenPlan{}, cmdutil.Usagef(fmt.Sprintf("--listen %q: want HOST:PORT (127.0.0.1:8808; port 0 picks one)", o.Listen))
	}
	for _, origin := range o.AllowOrigins {
		if _, err := coretap.ParseOrigin(origin); err != nil {
			return listenPlan{}, cmdutil.Usagef("--allow-origin: " + err.Error())
		}
	}
	loopback := coretap.IsLoopbackAddr(o.Listen)
	if !loopback && !o.AllowRemote {
		return listenPlan{}, cmdutil.Usagef(fmt.Sprintf("--listen %q is not a loopback address: anyone who can reach it could use the server through the tap; add --allow-remote to mean it", o.Listen))
	}
	label := o.Label
	if label == "" {
		label = target.Hostname()
	}
	lp.target, lp.loopback, lp.label = target, loopback, label
	return lp, nil
}

// httpTap is one running sonde tap --listen: what its session hooks, its
// serving and its stop share.
type httpTap struct {
	env *cmdutil.Env
	o   *Options
	listenPlan
	ln       net.Listener
	tel      *connect.Telemetry
	obs      *client.Observer // the tap's own recording (nil: none)
	sessions sessionRecordings
	proxy    *coretap.Proxy
	breaks   *hold.Engine // nil: no socket, no breakpoints
}

// armBreaks gives the proxy the breakpoints when the tap has sockets
// (sonde breaks reaches it through them: the breakpoints, --break's or
// added later, hold frames of every HTTP session it forwards), and says
// they are off otherwise.
func (t *httpTap) armBreaks(popts *coretap.ProxyOptions, socket bool) {
	if !socket {
		if t.o.Break.given() {
			fmt.Fprintln(t.env.Err, "sonde tap: no socket for sonde breaks (a session recorded in the sessions folder has one): the breakpoints are off")
		}
		return
	}
	popts.Hold, t.breaks = t.listenPlan.breaks, t.listenPlan.breaks
	noteBreaks(t.obs, t.breaks)
}

// openSession is the proxy's Sessions hook: a recording of its own for
// the HTTP session id, in the sessions folder.
func (t *httpTap) openSession(id string, start time.Time) *client.Observer {
	env, o, label, target := t.env, t.o, t.label, t.target
	n := t.sessions.next()
	sobs, srec, spath := openRecorded(env, o, fmt.Sprintf("%s-%d", label, n), capture.Options{Transport: "http", URL: coretap.RedactURL(target), Redact: t.red, Start: start, WriteBuffer: sessionWriteBuffer},
		fmt.Sprintf("sonde tap: session %q, HTTP session %d (%s), HTTP tap on %s for %s, tap pid %d", label, n, sessionWords(id), t.ln.Addr(), coretap.RedactURL(target), os.Getpid()), true)
	if sobs == nil {
		return nil
	}
	sobs = observe(t.tel, sobs)
	noteFaults(sobs, t.faults)
	t.obs.Note(fmt.Sprintf("sonde tap: HTTP session %d (%s) is recorded in %s", n, sessionWords(id), spath), time.Now())
	// sonde inject sends into this session (the tap's own socket:
	// into the session of the host's latest POST); with fault
	// rules, sonde faults turns them on and off instead.
	ctl := &control{faults: t.faults, obs: sobs, breaks: t.breaks}
	if t.faults == nil {
		ctl.inj = t.proxy.SessionInjector(id)
	}
	stop := serveInjector(ctl, socketPath(spath), env.Err)
	t.sessions.add(sessionRecording{sobs, srec, spath, stop, id})
	return sobs
}

// endSession is the proxy's SessionEnded hook: it closes the session's
// recording.
func (t *httpTap) endSession(id string, why coretap.SessionEnd) {
	s, ok := t.sessions.remove(id)
	if !ok {
		return
	}
	how, loud := endWords(t.o, id, why)
	s.close(t.env, how)
	t.obs.Note(fmt.Sprintf("sonde tap: HTTP session (%s) ended; its recording %s is closed", sessionWords(id), s.path), time.Now())
	if loud {
		fmt.Fprintf(t.env.Err, "%s; its recording %s is closed\n", how, s.path)
	}
}

// serve says where to point the host and serves until a signal or the
// server's end, then shuts the server down (requests in flight get
// shutdownGrace). It returns what ended serving, nil for a signal.
func (t *httpTap) serve(signals <-chan os.Signal, recPath string) error {
	env, target := t.env, t.target
	srv := &http.Server{Handler: t.proxy, ReadHeaderTimeout: 30 * time.Second}
	hostURL := (&url.URL{Scheme: "http", Host: t.ln.Addr().String(), Path: target.Path, RawQuery: target.RawQuery}).String()
	fmt.Fprintf(env.Out, "listening on %s\n", hostURL)
	fmt.Fprintf(env.Err, "sonde tap: forwarding %s to %s; put %s in the host's config instead of the server's URL\n", t.ln.Addr(), coretap.RedactURL(target), hostURL)
	if recPath != "" {
		fmt.Fprintf(env.Err, "sonde tap: recording to %s\n", recPath)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.ln) }()

	var serveErr error
	select {
	case sig := <-signals:
		if t.obs != nil {
			t.obs.Note(fmt.Sprintf("sonde tap: %v: stopping", sig), time.Now())
		}
	case serveErr = <-served:
	}
	if t.breaks != nil {
		t.breaks.Close() // what is held goes on before the grace runs
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	if err := srv.Shutdown(ctx); err != nil {
		srv.Close() // streams still open after the grace
	}
	cancel()
	return serveErr
}

// stop closes the proxy and every session's recording, noting what the
// tap forwarded.
func (t *httpTap) stop() {
	st := t.proxy.Close()
	if t.obs == nil {
		return
	}
	note := fmt.Sprintf("sonde tap: stopped after %d requests", st.Exchanges)
	if st.MissedChunks > 0 {
		note += fmt.Sprintf("; observation missed %d reads (%d bytes), forwarded all the same", st.MissedChunks, st.MissedBytes)
	}
	for _, s := range t.sessions.all() {
		s.close(t.env, note)
	}
	t.obs.Note(note, time.Now())
}

// sessionWriteBuffer is the write buffer of an HTTP session's recording
// (capture.Options.WriteBuffer): up to --max-sessions of them at once, each
// written every recordFlush.
const sessionWriteBuffer = 8 << 10

// growBuffer is the channel of a growing subscription (growing): what
// waits for a recorder that keeps up.
const growBuffer = 64

// growing is an observer whose recorder subscribes to it with a channel
// of growBuffer events, and a queue up to the recorder's buffer
// (recordBuffer) only while the recorder is behind: an HTTP session's
// recording costs a few kilobytes when idle and loses nothing of a burst
// a full-size channel would have held (recordBuffer events of 128 bytes,
// 4 MiB, made whole up front, took 1,000 sessions to 4 GB of heap).
type growing struct{ obs *client.Observer }

func (g growing) Subscribe(n int) *client.Subscription { return g.obs.SubscribeGrowing(growBuffer, n) }

// endWords is the note that closes the recording of session id, ended
// for why, and whether it is said on stderr too (a session the tap
// closed, not the host).
func endWords(o *Options, id string, why coretap.SessionEnd) (string, bool) {
	switch why {
	case coretap.EndStream:
		return "sonde tap: the session's SSE stream ended (legacy transport)", false
	case coretap.EndIdle:
		return fmt.Sprintf("sonde tap: HTTP session (%s) closed: nothing went by in it for %v (--session-idle); if the host comes back to it, it is recorded anew", sessionWords(id), o.SessionIdle), true
	case coretap.EndEvicted:
		return fmt.Sprintf("sonde tap: HTTP session (%s) closed: %d sessions were open (--max-sessions) and a new one came; this one was idle the longest; if the host comes back to it, it is recorded anew", sessionWords(id), maxSessions(o)), true
	}
	return "sonde tap: the host ended the session (DELETE)", false
}

// maxSessions is --max-sessions, or its default.
func maxSessions(o *Options) int {
	if o.MaxSessions <= 0 {
		return coretap.DefaultMaxSessions
	}
	return o.MaxSessions
}

// sessionRecordings are the recordings of an HTTP tap's sessions.
type sessionRecordings struct {
	mu   sync.Mutex
	list []sessionRecording
	n    int // sessions numbered so far
}

type sessionRecording struct {
	obs  *client.Observer
	rec  *capture.Recorder
	path string
	stop func() // its injection socket's (nil: none)
	id   string // the session's Mcp-Session-Id ("": the tap's own)
}

// close ends a recording with note.
func (s sessionRecording) close(env *cmdutil.Env, note string) {
	if s.stop != nil {
		s.stop()
	}
	s.obs.Note(note, time.Now())
	s.obs.Close()
	if sum := s.rec.Close(); sum.Err != nil {
		fmt.Fprintf(env.Err, "sonde tap: recording %s: %v\n", s.path, sum.Err)
	}
}

// remove takes session id's recording out of the list.
func (s *sessionRecordings) remove(id string) (sessionRecording, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.list {
		if r.id == id && id != "" {
			s.list = append(s.list[:i], s.list[i+1:]...)
			return r, true
		}
	}
	return sessionRecording{}, false
}

func (s *sessionRecordings) add(r sessionRecording) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, r)
}

// next numbers a new session: 1, 2…
func (s *sessionRecordings) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return s.n
}

func (s *sessionRecordings) all() []sessionRecording {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sessionRecording(nil), s.list...)
}

// sessionWords names an HTTP session of the tap in notes: its
// Mcp-Session-Id, or a legacy session's endpoint.
func sessionWords(id string) string {
	if uri, ok := strings.CutPrefix(id, coretap.LegacySession); ok {
		return "legacy endpoint " + uri
	}
	return "Mcp-Session-Id " + id
}

// listenBreaks builds an HTTP tap's breakpoints from the flags; each step
// of a held frame is noted through the proxy *p (Proxy.NoteHold), once set.
func listenBreaks(b *BreakOptions, p **coretap.Proxy) (*hold.Engine, error) {
	return engineOf(b, func(h client.Hold) {
		if *p != nil {
			(*p).NoteHold(h)
		}
	})
}

// engineOf builds breakpoints from the flags (as breaksOf does a stdio
// run's) with note as the Engine's Note. A bad query is a usage error
// naming it (and the file's line).
func engineOf(b *BreakOptions, note func(client.Hold)) (*hold.Engine, error) {
	timeout, err := b.timeout()
	if err != nil {
		return nil, err
	}
	e := hold.New(hold.Options{Timeout: timeout, Note: note})
	if err := b.load(e); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}
