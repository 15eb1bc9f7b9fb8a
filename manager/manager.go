// Package manager runs several MCP servers at once, the way a host does:
// servers by name (from the hosts' config files), each started only when
// it is first used (or at once, with Prewarm), their tools aggregated as
// server/tool with name conflicts flagged, and restarts decided here only,
// never by a request: exponential backoff, a maximum number of failures in
// a row, then a quarantine keyed by the server's Hash, lifted only by the
// user's approval of a changed configuration or binary. The failure counts
// reset only after a server stayed up long enough to be called healthy,
// and what the policy knows is kept per user across runs (a state file).
//
// Ownership (docs/servers.md, "How the manager is built"): the Manager owns
// its map of servers, the state records and the set of calls in flight;
// each server's client is owned by its entry and released by Stop (or by
// the watcher goroutine when the process ended by itself); each client
// owns its process, pipes and pending map, as everywhere. Stop aborts
// every call first (each pending request settles through the client's one
// settle path, with a structured Reason as the cause), waits for the
// callers to have their outcome, and only then closes the servers.
package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// CodeQuarantined is the stable code of a use of a quarantined server
// (docs/errors.md): it failed Policy.MaxFailures times in a row and is not
// started again until it is approved.
const CodeQuarantined client.Code = "MCP_QUARANTINED"

// ErrQuarantined matches a CodeQuarantined error with errors.Is.
var ErrQuarantined = &client.Error{Code: CodeQuarantined}

// ErrUnknownServer: no server of the manager has the name asked for.
var ErrUnknownServer = errors.New("no such server")

// ErrUnchanged: Approve was asked for a quarantined server whose hash has
// not changed since it was quarantined.
var ErrUnchanged = errors.New("unchanged since its quarantine")

// Spec is one server the manager can start.
type Spec struct {
	// Name is the server's name, unique in the manager (the host config
	// entry's name).
	Name string
	// Where says where it was found ("VS Code · user"), for display.
	Where string
	// Argv is the command of a stdio server; URL that of an HTTP one.
	Argv []string
	URL  string
	// Env is added to the server's environment (KEY=VALUE); only the names
	// are part of the hash.
	Env []string
	// Cwd is the working directory ("" for sonde's).
	Cwd string
	// Hide are secret values (hostconfig.Server.Secrets) hidden where the command
	// line is shown.
	Hide []string
}

// FromHost is the spec of a resolved host config entry (hostconfig's
// Resolve): its command, arguments, environment and cwd, or its URL.
func FromHost(s hostconfig.Server) Spec {
	sp := Spec{Name: s.Name, Where: s.Where(), Cwd: s.Cwd, Hide: s.Secrets()}
	if s.Transport == hostconfig.Stdio {
		sp.Argv = append([]string{s.Command}, s.Args...)
		for _, k := range s.EnvNames() {
			sp.Env = append(sp.Env, k+"="+s.Env[k])
		}
		return sp
	}
	sp.URL = s.URL
	return sp
}

// Policy is the restart policy.
type Policy struct {
	// BaseDelay is the wait after the first failure; each further failure
	// in a row doubles it, up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxFailures in a row quarantine the server.
	MaxFailures int
	// HealthyAfter is how long a server must stay up for its failure count
	// to reset.
	HealthyAfter time.Duration
}

// DefaultPolicy: 1s, 2s, 4s… up to 1m; quarantine after 5 failures in a
// row; healthy after 30s up.
var DefaultPolicy = Policy{BaseDelay: time.Second, MaxDelay: time.Minute, MaxFailures: 5, HealthyAfter: 30 * time.Second}

// Delay is the backoff after n failures in a row (n >= 1).
func (p Policy) Delay(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	return min(d, p.MaxDelay)
}

// Options configure a Manager.
type Options struct {
	// Client are the options of every client the manager creates.
	Client client.Options
	// Dial returns how to reach a server (nil: stdio, with Stdio's
	// settings, the environment built by transport.BuildEnv).
	Dial func(s Spec) (client.Dialer, error)
	// Stdio are the settings of the default stdio dialer (Argv, Env and
	// Dir come from the Spec).
	Stdio transport.StdioConfig
	// PassEnv are the variables of sonde's environment passed to every
	// stdio server (the default dialer).
	PassEnv []string
	// OnClient is called with each new client before it connects (to
	// follow its events: a recorder, the UI).
	OnClient func(name string, c *client.Client)
	// Policy is the restart policy (zero fields: DefaultPolicy's).
	Policy Policy
	// StatePath is the state file ("": nothing is kept across runs).
	StatePath string
}

// State is where a server is in its life.
type State string

// The states of a server.
const (
	NotStarted  State = "not started"
	Starting    State = "starting"
	Ready       State = "ready"
	BackingOff  State = "backing off"
	Quarantined State = "quarantined"
	Failed      State = "failed"
	Stopped     State = "stopped"
)

// Status is what the manager says about one server.
type Status struct {
	Name  string
	Where string
	Hash  string
	State State
	// Failures in a row, and when the next start may be made.
	Failures int
	NextTry  time.Time
	// Why is the last failure (and the quarantine's reason).
	Why string
	// Changed: quarantined under another hash; Approve lifts it.
	Changed bool
	// Pid is the process of a running stdio server.
	Pid int
	// Server and Protocol are from the initialize result.
	Server   string
	Protocol string
}

// Manager runs the servers of its specs. Create it with New; Stop it.
type Manager struct {
	opts  Options
	order []string

	stopOnce sync.Once
	// run ends when Stop begins, its cause the Stop's Reason: the starts
	// and backoff waits under way end with it.
	run     context.Context
	stopRun context.CancelCauseFunc

	mu       sync.Mutex
	servers  map[string]*server
	recs     map[string]*Record
	stopping bool
	calls    map[*inflight]struct{}
	callWG   sync.WaitGroup
	watchWG  sync.WaitGroup
	stateErr error
}

// server is one entry: the spec and, while it runs, its client.
type server struct {
	spec     Spec
	hash     string
	state    State
	client   *client.Client
	starting chan struct{} // closed when a start in progress ends
	readyAt  time.Time
	init     *mcp.InitializeResult
	pid      int
	exit     *transport.Exit
	lastErr  error
	phase    Phase // where lastErr happened: PhaseStart or PhaseExit
	tools    []mcp.Tool
	ours     bool // the manager closed the client (not a failure)
}

// inflight is one call the manager runs, stoppable by Stop.
type inflight struct {
	stop func(error)
}

// New returns a manager of the specs (names must be unique), reading the
// state file. Nothing is started. A state file that cannot be read is
// reported by StateError and treated as empty.
func New(specs []Spec, opts Options) (*Manager, error) {
	if opts.Policy.BaseDelay <= 0 {
		opts.Policy.BaseDelay = DefaultPolicy.BaseDelay
	}
	if opts.Policy.MaxDelay <= 0 {
		opts.Policy.MaxDelay = DefaultPolicy.MaxDelay
	}
	if opts.Policy.MaxFailures <= 0 {
		opts.Policy.MaxFailures = DefaultPolicy.MaxFailures
	}
	if opts.Policy.HealthyAfter <= 0 {
		opts.Policy.HealthyAfter = DefaultPolicy.HealthyAfter
	}
	m := &Manager{opts: opts, servers: map[string]*server{}, calls: map[*inflight]struct{}{}}
	m.run, m.stopRun = context.WithCancelCause(context.Background())
	digests := digestCache{}
	for _, s := range specs {
		if _, dup := m.servers[s.Name]; dup || s.Name == "" {
			return nil, fmt.Errorf("server name %q is empty or given twice", s.Name)
		}
		m.servers[s.Name] = &server{spec: s, hash: hashWith(s, digests.digest), state: NotStarted}
		m.order = append(m.order, s.Name)
	}
	m.recs, m.stateErr = loadState(opts.StatePath)
	return m, nil
}

// StateError is why the state file could not be read (nil when it could,
// or did not exist).
func (m *Manager) StateError() error { return m.stateErr }

// Names are the servers' names, in the order of the specs.
func (m *Manager) Names() []string { return append([]string(nil), m.order...) }

// Status returns the status of every server, in the order of the specs.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.order))
	for _, n := range m.order {
		out = append(out, m.statusLocked(m.servers[n]))
	}
	return out
}

func (m *Manager) statusLocked(s *server) Status {
	st := Status{Name: s.spec.Name, Where: s.spec.Where, Hash: s.hash, State: s.state, Pid: s.pid}
	if s.init != nil {
		st.Server = strings.TrimSpace(s.init.ServerInfo.Name + " " + s.init.ServerInfo.Version)
		st.Protocol = s.init.ProtocolVersion
	}
	if s.lastErr != nil {
		st.Why = s.lastErr.Error()
	}
	if r := m.recs[s.spec.Name]; r != nil {
		st.Failures, st.NextTry = r.Failures, r.NextTry
		if st.Why == "" && r.Hash == s.hash && r.Failures > 0 {
			st.Why = r.Why // from an earlier run
		}
		if r.Quarantined {
			st.Why = r.Why
			if s.state != Ready && s.state != Starting {
				st.State = Quarantined
			}
			st.Changed = r.Hash != s.hash
		} else if r.Hash == s.hash && (s.state == NotStarted || s.state == Failed || s.state == BackingOff) {
			// Backing off until NextTry (from this run or an earlier
			// one); failed once the wait is over.
			st.State = Failed
			if time.Now().Before(r.NextTry) {
				st.State = BackingOff
			} else if r.Failures == 0 {
				st.State = s.state
			}
		}
	}
	return st
}

// Client returns the server's client, starting the server if it is not
// running (lazy start). While the server is backing off it waits for the
// backoff to end (or ctx); a quarantined server fails at once with
// MCP_QUARANTINED. A failed start counts against the policy, unless ctx
// ended (a deliberate stop).
func (m *Manager) Client(ctx context.Context, name string) (*client.Client, error) {
	// Stop ends the waits and the start below too, with its reason.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	unhook := context.AfterFunc(m.run, func() { cancel(context.Cause(m.run)) })
	defer unhook()
	for {
		m.mu.Lock()
		s := m.servers[name]
		if s == nil {
			m.mu.Unlock()
			return nil, fmt.Errorf("%w %q (the servers are: %s)", ErrUnknownServer, name, strings.Join(m.order, ", "))
		}
		if m.stopping {
			m.mu.Unlock()
			return nil, &client.Error{Code: client.CodeClosed, Message: "server " + name + ": the manager is stopping"}
		}
		if s.state == Ready && s.client != nil {
			c := s.client
			select {
			case <-c.Done(): // it ended; its watcher may not know yet
				m.endedLocked(s, c)
				m.mu.Unlock()
				continue
			default:
			}
			m.mu.Unlock()
			return c, nil
		}
		if ch := s.starting; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, abortedErr(name, ctx)
			}
		}
		r := m.recs[name]
		if r != nil && r.Quarantined {
			m.mu.Unlock()
			return nil, quarantinedErr(name, r, r.Hash != s.hash)
		}
		if r != nil && r.Hash == s.hash {
			if wait := time.Until(r.NextTry); wait > 0 {
				m.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-t.C:
					continue
				case <-ctx.Done():
					t.Stop()
					return nil, abortedErr(name, ctx)
				}
			}
		}
		return m.startUnlock(ctx, name, s)
	}
}

// startUnlock starts server s (name) for Client, and records the outcome:
// called with m.mu held, it returns with m.mu released.
func (m *Manager) startUnlock(ctx context.Context, name string, s *server) (*client.Client, error) {
	ch := make(chan struct{})
	s.starting, s.state, s.ours, s.exit, s.pid = ch, Starting, false, nil, 0
	m.callWG.Add(1) // Stop waits for a start as for a call
	m.mu.Unlock()
	c, init, err := m.start(ctx, s)
	m.callWG.Done()
	m.mu.Lock()
	s.starting = nil
	close(ch)
	if err != nil {
		s.state = Failed
		if ctx.Err() == nil {
			m.failLocked(s, err, PhaseStart)
		} else {
			s.state = NotStarted
		}
		m.mu.Unlock()
		return nil, err
	}
	if m.stopping {
		m.mu.Unlock()
		c.Close()
		return nil, &client.Error{Code: client.CodeClosed, Message: "server " + name + ": the manager is stopping"}
	}
	s.client, s.init, s.state, s.readyAt, s.lastErr = c, init, Ready, time.Now(), nil
	m.mu.Unlock()
	return c, nil
}

// start creates, connects and initializes a client for s, with the
// watcher that notices when its server ends.
func (m *Manager) start(ctx context.Context, s *server) (*client.Client, *mcp.InitializeResult, error) {
	dial, err := m.dialer(s.spec)
	if err != nil {
		return nil, nil, &client.Error{Code: client.CodeSpawn, Message: "server " + s.spec.Name + ": " + err.Error(), Err: err}
	}
	c := client.New(m.opts.Client)
	sub := c.Subscribe(256)
	if m.opts.OnClient != nil {
		m.opts.OnClient(s.spec.Name, c)
	}
	m.watchWG.Add(1)
	go m.watch(s, c, sub)
	if err := c.Connect(dial); err != nil {
		c.Close()
		return nil, nil, err
	}
	init, err := c.Initialize(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, init, nil
}

func (m *Manager) dialer(s Spec) (client.Dialer, error) {
	if m.opts.Dial != nil {
		return m.opts.Dial(s)
	}
	if s.URL != "" {
		return client.HTTP(transport.HTTPConfig{URL: s.URL}), nil
	}
	env, err := transport.BuildEnv(osEnviron(), m.opts.PassEnv, s.Env)
	if err != nil {
		return nil, err
	}
	cfg := m.opts.Stdio
	cfg.Argv, cfg.Env, cfg.Dir, cfg.Hide = s.Argv, env, s.Cwd, s.Hide
	return client.Stdio(cfg), nil
}

// watch follows one client's events until its stream closes: it keeps the
// process's pid and exit, and when the connection ends without the
// manager having closed it, counts a failure and releases the client.
func (m *Manager) watch(s *server, c *client.Client, sub *client.Subscription) {
	defer m.watchWG.Done()
	ended := c.Done()
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			m.noteEvent(s, c, ev)
		case <-ended:
			ended = nil
			m.mu.Lock()
			m.endedLocked(s, c)
			m.mu.Unlock()
		}
	}
}

// endedLocked handles the end of client c of s, once (whoever sees it
// first: its watcher, or a use finding it ended): a server the caller
// stopped (the UI's restart, Stop) is stopped; one that ended by itself
// counts a failure. The client is closed either way (which also ends its
// watcher's subscription).
func (m *Manager) endedLocked(s *server, c *client.Client) {
	if s.client != c {
		return
	}
	s.client = nil
	if s.ours || c.Stopped() {
		s.state = Stopped
	} else {
		m.failLocked(s, endedErr(s), PhaseExit)
	}
	go c.Close()
}

func (m *Manager) noteEvent(s *server, c *client.Client, ev client.Event) {
	if ev.Kind != client.EvProcess || ev.Proc == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.client != nil && s.client != c {
		return
	}
	switch ev.Proc.What {
	case client.ProcStart:
		s.pid = ev.Proc.Pid
	case client.ProcExit:
		s.exit = ev.Proc.Exit
	}
}

// endedErr is the failure of a server whose connection ended by itself.
func endedErr(s *server) error {
	if s.exit != nil {
		return &client.Error{Code: client.CodeProcessExit, Message: "server " + s.spec.Name + " ended (" + s.exit.Status() + ")", Exit: s.exit}
	}
	return &client.Error{Code: client.CodeProcessExit, Message: "server " + s.spec.Name + ": the connection ended"}
}

// failLocked counts a failure of s (in PhaseStart or PhaseExit) against
// the policy: the count resets
// first if the server had been healthy; past MaxFailures the server is
// quarantined under its hash, else it backs off.
func (m *Manager) failLocked(s *server, err error, phase Phase) {
	now := time.Now()
	r := m.recs[s.spec.Name]
	if r == nil || r.Hash != s.hash {
		r = &Record{Hash: s.hash}
		m.recs[s.spec.Name] = r
	}
	if !s.readyAt.IsZero() && now.Sub(s.readyAt) >= m.opts.Policy.HealthyAfter {
		r.Failures = 0
	}
	s.readyAt = time.Time{}
	s.lastErr, s.phase = err, phase
	r.Failures++
	r.Why = mcp.Clip(err.Error(), 300)
	if r.Failures >= m.opts.Policy.MaxFailures {
		r.Quarantined, r.Since, r.NextTry = true, now, time.Time{}
		s.state = Quarantined
	} else {
		r.NextTry = now.Add(m.opts.Policy.Delay(r.Failures))
		s.state = BackingOff
	}
	m.saveLocked()
}

func (m *Manager) saveLocked() {
	if err := saveState(m.opts.StatePath, m.recs); err != nil {
		m.stateErr = err
	}
}

// Approve lifts the quarantine of a server whose hash changed since it was
// quarantined (its configuration or binary): the user has seen the change.
// The failure count starts afresh. A quarantine under the same hash stays
// (ErrUnchanged): fix the server first. A server not quarantined needs no
// approval (nil).
func (m *Manager) Approve(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[name]
	if s == nil {
		return fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	r := m.recs[name]
	if r == nil || !r.Quarantined {
		return nil
	}
	if r.Hash == s.hash {
		return fmt.Errorf("server %s: %w (%s): change its configuration or binary, then approve it", name, ErrUnchanged, r.Why)
	}
	m.recs[name] = &Record{Hash: s.hash}
	s.state, s.lastErr = NotStarted, nil
	m.saveLocked()
	return nil
}

// Prewarm starts the named servers at once, in parallel, and returns the
// errors of those that did not start (by name).
func (m *Manager) Prewarm(ctx context.Context, names ...string) map[string]error {
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			if _, err := m.Client(ctx, n); err != nil {
				mu.Lock()
				errs[n] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// Stop ends the run: it aborts every call in flight first, with reason as
// the cause of each (so each pending request settles through the client's
// settle path as MCP_ABORTED carrying it), waits until every caller has
// its outcome, then closes every running server and waits for their
// watchers. Failures counts of servers that were healthy are reset, and
// the state is saved. Stop is idempotent: the first reason wins, and a
// concurrent caller returns once the first one's stop is complete. Later
// uses of the manager fail with CLIENT_CLOSED.
func (m *Manager) Stop(reason *Reason) {
	m.stopOnce.Do(func() { m.stop(reason) })
}

func (m *Manager) stop(reason *Reason) {
	if reason == nil {
		reason = &Reason{Kind: UserCancel, Detail: "the run ended"}
	}
	m.mu.Lock()
	m.stopping = true
	m.stopRun(reason)
	calls := make([]*inflight, 0, len(m.calls))
	for c := range m.calls {
		calls = append(calls, c)
	}
	m.mu.Unlock()
	for _, c := range calls {
		c.stop(reason)
	}
	m.callWG.Wait()
	m.mu.Lock()
	var running []*client.Client
	now := time.Now()
	for _, n := range m.order {
		s := m.servers[n]
		if s.client == nil {
			continue
		}
		if r := m.recs[n]; r != nil && r.Hash == s.hash && !r.Quarantined && now.Sub(s.readyAt) >= m.opts.Policy.HealthyAfter && r.Failures > 0 {
			r.Failures, r.NextTry = 0, time.Time{}
		}
		s.ours = true
		s.state = Stopped
		running = append(running, s.client)
		s.client = nil
	}
	m.saveLocked()
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Go(func() { c.Close() })
	}
	wg.Wait()
	m.watchWG.Wait()
}

// abortedErr is the error of a wait that ctx ended, its Reason kept.
func abortedErr(name string, ctx context.Context) error {
	r := reasonOf(ctx)
	return &client.Error{Code: client.CodeAborted, Message: "server " + name + ": stopped waiting: " + r.Error(), Err: r}
}

func quarantinedErr(name string, r *Record, changed bool) error {
	msg := fmt.Sprintf("server %s is quarantined after %d failures in a row (last: %s)", name, r.Failures, r.Why)
	if changed {
		msg += "; its configuration or binary changed since: approve it to start it again (sonde servers approve " + name + ", or ctrl+r in the list of sonde --all)"
	} else {
		msg += "; fix its configuration or binary, then approve it"
	}
	return &client.Error{Code: CodeQuarantined, Message: msg}
}

// rawArgs is args as JSON (nil stays nil).
func rawArgs(args any) (json.RawMessage, error) {
	switch a := args.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return a, nil
	}
	return json.Marshal(args)
}
