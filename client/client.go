// Package client is sonde's instrumented MCP client: it owns request ids, the
// pending map, timeouts, cancellation, the initialize handshake, answers to
// the server's requests, and the event stream that shows all of it.
//
// Every request has exactly one owner (its pending entry) and exactly one
// completion point (settle): the first outcome wins, and anything that comes
// later (a response after a timeout, a second response) is reported as an
// event, never delivered. The pending entry is registered before the bytes
// are written, and a request settled before it was written is never written.
//
// Events: every frame in and out, every lifecycle transition of every
// request, every stderr chunk and process event becomes an Event with a
// sequence number. See Subscription for the delivery rule: the client never
// waits for a consumer, and counts what each consumer missed. Events are
// shared between subscribers and must be treated as read-only.
package client

import (
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// drainGrace bounds how long Close lets queued notifications go out.
const drainGrace = 250 * time.Millisecond

// Defaults for Options fields left zero.
const (
	DefaultTimeout    = 30 * time.Second
	DefaultMaxPending = 1024
	DefaultRetiredIDs = 4096
)

// Options configure a Client.
type Options struct {
	// Timeout is the default deadline of each request.
	Timeout time.Duration
	// ResetOnProgress restarts a request's deadline when the server reports
	// progress for it, up to MaxTotalTimeout after it was queued.
	ResetOnProgress bool
	// MaxTotalTimeout caps a request's life when ResetOnProgress is on
	// (default 10 × Timeout).
	MaxTotalTimeout time.Duration
	// MaxPending caps requests in flight; past it a request fails at once
	// with MCP_BUSY.
	MaxPending int
	// MaxLineBytes caps the size of one outgoing message (default
	// transport.DefaultMaxLineBytes).
	MaxLineBytes int
	// Strict treats a malformed line from the server as corruption: every
	// pending request fails with MCP_PROTOCOL and the server is closed.
	Strict bool
	// ProtocolVersion is asked for in initialize (default mcp.LatestVersion).
	ProtocolVersion string
	// ClientName and ClientVersion are sent as clientInfo.
	ClientName    string
	ClientVersion string
	// RetiredIDs bounds how many settled ids are remembered to tell late and
	// duplicate responses apart from unknown ones.
	RetiredIDs int
	// ServerRequests are the client capabilities declared and how the
	// server's requests are answered (see respond.go).
	ServerRequests ServerRequests
	// Era is the protocol era: EraLegacy (default), EraModern or EraAuto
	// (see era.go).
	Era Era
	// Inputs answers the input requests of input_required results (modern
	// era) that ServerRequests does not answer (roots/list from its roots,
	// sampling and elicitation by its Handler); nil: such a call fails with
	// MCP_PROTOCOL.
	Inputs InputFunc
	// Flood limits the server's notifications (flood.go); zero: none.
	Flood FloodLimit
	// RequestMeta adds members to each request's params._meta (meta.go).
	RequestMeta RequestMetaFunc
}

func (o *Options) fill() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxTotalTimeout <= 0 {
		o.MaxTotalTimeout = 10 * o.Timeout
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = transport.DefaultMaxLineBytes
	}
	if o.ProtocolVersion == "" {
		o.ProtocolVersion = mcp.LatestVersion
	}
	if o.ClientName == "" {
		o.ClientName = "sonde"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.RetiredIDs <= 0 {
		o.RetiredIDs = DefaultRetiredIDs
	}
	if o.Era == "" {
		o.Era = EraLegacy
	}
}

// Client is a connection to one MCP server. Create it with New, subscribe to
// its events, then Connect.
type Client struct {
	opts Options

	mu          sync.Mutex
	conn        transport.Conn
	lastID      int64
	pending     map[int64]*pending
	retired     retiredSet
	initialized bool
	closed      bool
	// dead is set once the session cannot carry requests any more (the
	// server exited, or the stream was corrupt); new calls fail with it.
	dead        *Error
	stats       Stats
	srv         srvState         // the server's requests and sonde's roots
	meta        requestMetaState // the scratch of each request's _meta (meta.go)
	taskCancels sentCancels      // the tasks/cancel sonde sent (taskcall.go)
	hold        deadlineHold     // the hold of sonde's deadlines (hold.go)
	flood       floodWindow      // the notifications of the current second
	// stopped: the caller ended the server (Close, StopServer, Kill).
	stopped bool

	init initState
	era  eraState

	out writeQueue

	hub hub // the event stream (event.go)

	watch watchState // what a timeout snapshot reports (snapshot.go)

	readDone  chan struct{}
	endRead   func() // closes readDone, once
	closeOnce sync.Once
	closeDone chan struct{}
}

// Stats counts what the client has seen; read it with Client.Stats.
type Stats struct {
	Pending   int
	Sent      uint64
	Resolved  uint64
	Errors    uint64
	Timeouts  uint64
	Cancelled uint64
	Failed    uint64
	Late      uint64
	// LateTimeouts counts the late responses to requests that timed out
	// (Timeouts minus LateTimeouts have had no answer yet).
	LateTimeouts uint64
	Duplicate    uint64
	Unknown      uint64
	Malformed    uint64
	Invalid      uint64
	Progress     uint64
	ServerReqs   uint64
	// Undeclared counts the server's requests for a capability sonde did
	// not declare.
	Undeclared uint64
	// Retried counts modern requests answered input_required and retried.
	Retried uint64
	// StderrBytes counts every byte the server wrote on stderr.
	StderrBytes uint64
}

// New returns a client that is not connected yet.
func New(opts Options) *Client {
	opts.fill()
	c := &Client{
		opts:      opts,
		pending:   make(map[int64]*pending),
		retired:   newRetiredSet(opts.RetiredIDs),
		readDone:  make(chan struct{}),
		closeDone: make(chan struct{}),
	}
	c.srv.c, c.srv.tasks.c, c.era.c, c.init.c, c.watch.c, c.hold.c, c.taskCancels.c, c.flood.c = c, c, c, c, c, c, c, c
	c.srv.roots = append([]mcp.Root(nil), opts.ServerRequests.RootList...)
	c.endRead = sync.OnceFunc(func() { close(c.readDone) })
	c.out.init(opts.MaxPending*2 + 64)
	return c
}

// Dialer opens a connection whose out-of-band events go to obs.
type Dialer func(obs transport.Observer) (transport.Conn, error)

// Stdio returns a Dialer that starts cfg as a subprocess.
func Stdio(cfg transport.StdioConfig) Dialer {
	return func(obs transport.Observer) (transport.Conn, error) {
		s, err := transport.StartStdio(cfg, obs)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// HTTP returns a Dialer that connects to cfg.URL over Streamable HTTP or
// legacy HTTP+SSE.
func HTTP(cfg transport.HTTPConfig) Dialer {
	return func(obs transport.Observer) (transport.Conn, error) {
		h, err := transport.DialHTTP(cfg, obs)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

// Connect opens the connection and starts reading and writing. A server
// that cannot be started is MCP_SPAWN. Connect does not run the handshake:
// call Initialize.
func (c *Client) Connect(dial Dialer) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return newErr(CodeClosed, "client is closed")
	}
	if c.conn != nil {
		c.mu.Unlock()
		return newErr(CodeProtocol, "already connected")
	}
	c.mu.Unlock()
	conn, err := dial(c.observe)
	if err != nil {
		e := spawnErr(err)
		c.hub.emit(Event{Kind: EvProcess, Proc: &ProcInfo{What: ProcSpawnFailed, Err: e}})
		c.mu.Lock()
		c.dead = e
		c.mu.Unlock()
		c.endRead()
		return e
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	go c.writeLoop(conn)
	go c.readLoop(conn)
	return nil
}

func (c *Client) observe(ev transport.Event) {
	switch ev.Kind {
	case transport.EventStart:
		c.mu.Lock()
		c.watch.pid = ev.Pid
		c.mu.Unlock()
		c.hub.emit(Event{Time: ev.Time, Kind: EvProcess, Proc: &ProcInfo{What: ProcStart, Pid: ev.Pid, Argv: ev.Argv}})
	case transport.EventStderr:
		c.mu.Lock()
		c.stats.StderrBytes += uint64(len(ev.Data))
		c.watch.seenStderr(ev.Time, ev.Data)
		c.mu.Unlock()
		c.hub.emit(Event{Time: ev.Time, Kind: EvStderr, Stderr: ev.Data})
	case transport.EventSignal:
		c.hub.emit(Event{Time: ev.Time, Kind: EvProcess, Proc: &ProcInfo{What: ProcSignal, Pid: ev.Pid, Signal: ev.Signal}})
	case transport.EventConnect:
		c.mu.Lock()
		c.watch.http = true
		c.mu.Unlock()
		c.hub.emit(Event{Time: ev.Time, Kind: EvProcess, Proc: &ProcInfo{What: ProcConnect, Argv: ev.Argv}})
	case transport.EventHTTP:
		c.mu.Lock()
		c.watch.seenHTTPLocked(ev.Time, ev.HTTP)
		c.mu.Unlock()
		c.hub.emit(Event{Time: ev.Time, Kind: EvHTTP, HTTP: ev.HTTP})
	}
}

// Stats returns a snapshot of the client's counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Pending = len(c.pending)
	return s
}

// Pending returns how many requests are in flight.
func (c *Client) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Close fails every pending request with CLIENT_CLOSED, stops the server
// (see transport.Stdio.Close), waits for the client's goroutines, and closes
// every subscription. It is idempotent; concurrent callers wait for the same
// close.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed, c.stopped = true, true
		c.failAllLocked(newErr(CodeClosed, "client closed"), StateClosed)
		c.watch.stopReadLocked() // no request waits for a CPU reading now
		conn := c.conn
		c.mu.Unlock()
		// Let queued notifications (cancels for requests that timed out just
		// before) reach the server, for a moment, before its stdin closes.
		c.out.drain()
		if conn != nil {
			select {
			case <-c.out.done:
			case <-time.After(drainGrace):
			}
		}
		c.out.stop()
		if conn != nil {
			conn.Close()
			<-c.readDone
			<-c.out.done
		}
		c.era.wg.Wait()
		c.watch.readers.Wait() // the snapshots' readings of the server's processes
		c.endRead()
		c.hub.closeAll()
		close(c.closeDone)
	})
	<-c.closeDone
	return nil
}

// StopServer ends the server as Close does (stdin, TERM, KILL) but leaves
// the client open: pending requests fail with MCP_PROCESS_EXIT, as they would
// if the server had died, and the events up to the exit are delivered. Use
// it before replacing a server with a new one; call Close afterwards.
func (c *Client) StopServer() {
	c.mu.Lock()
	c.stopped = true
	conn := c.conn
	c.mu.Unlock()
	if conn != nil {
		conn.Close()
		<-c.readDone
	}
}

// Stopped reports whether the caller ended the server (Close, StopServer
// or Kill), as opposed to the server ending by itself: a session manager
// counts only the latter as a failure.
func (c *Client) Stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// Kill ends the server at once (SIGKILL to its process group, no grace
// period), when the connection can do that. Pending requests then fail as
// for any exit; call Close as usual.
func (c *Client) Kill() {
	c.mu.Lock()
	c.stopped = true
	conn := c.conn
	c.mu.Unlock()
	if k, ok := conn.(interface{ Kill() }); ok {
		k.Kill()
	}
}

// Done is closed when the server's connection has ended: the process
// exited, it could not be started, or the client was closed.
func (c *Client) Done() <-chan struct{} { return c.readDone }
