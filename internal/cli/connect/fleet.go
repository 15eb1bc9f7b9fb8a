package connect

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/manager"
	"github.com/sonde-mcp/sonde/transport"
)

// serverFlag is --server: repeatable; the first value is Flags.Server.
type serverFlag Flags

func (s *serverFlag) String() string { return s.Server }

func (s *serverFlag) Type() string { return "NAME" }

func (s *serverFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty server name")
	}
	if s.Server == "" {
		s.Server = v
	}
	for _, have := range s.Servers {
		if have == v {
			return nil
		}
	}
	s.Servers = append(s.Servers, v)
	return nil
}

// FleetFlags are the flags of the commands that take several servers
// (tools, call): --all and the restart policy.
type FleetFlags struct {
	All         bool
	MaxFailures int
	// StartsEvery is set by a command that starts every server --all
	// chooses (tools --all): the start rule (Hosts.Unnamed) then leaves out
	// the project servers nobody approved, each said on stderr.
	StartsEvery bool
}

// Register adds --all and --max-failures.
func (m *FleetFlags) Register(fs *pflag.FlagSet) {
	fs.BoolVar(&m.All, "all", false, "every server of the hosts' config files (see sonde config list), or of --config FILE, but those a host turned off; each starts only when it is used (tools --all starts no project server that neither its host nor you approved: sonde servers approve NAME)")
	fs.IntVar(&m.MaxFailures, "max-failures", manager.DefaultPolicy.MaxFailures, "with several servers: failures in a row (each followed by a backoff of 1s, 2s, 4s... up to 1m) after which a server is quarantined until approved (sonde servers approve NAME)")
}

// Fleet reports whether the run is over several servers: --all, or
// --server more than once.
func (m *FleetFlags) Fleet(f *Flags) bool { return m.All || len(f.Servers) > 1 }

// registerFlood adds --flood-limit and --flood-bytes.
func (f *Flags) registerFlood(fs *pflag.FlagSet) {
	f.FloodBytes = client.DefaultFloodBytes
	fs.IntVar(&f.FloodLimit, "flood-limit", client.DefaultFloodPerSecond, "notifications a server may send within one second; past it (or past --flood-bytes) the server is stopped (MCP_FLOOD). 0: no flood limit at all (the interactive UI's default)")
	fs.Var(&f.FloodBytes, "flood-bytes", "bytes of notifications a server may send within one second (e.g. 64MiB); past it the server is stopped (MCP_FLOOD)")
}

// FloodOffByDefault turns the flood limit off unless the command line
// sets it (call it after Register): the interactive UI shows a flood
// instead of stopping it.
func (f *Flags) FloodOffByDefault(fs *pflag.FlagSet) {
	f.FloodLimit = 0
	if fl := fs.Lookup("flood-limit"); fl != nil {
		fl.DefValue = "0"
	}
}

// floodLimit is the client's flood limit from the flags: none when
// --flood-limit is 0.
func (f *Flags) floodLimit() client.FloodLimit {
	if f.FloodLimit <= 0 {
		return client.FloodLimit{}
	}
	return client.FloodLimit{PerSecond: f.FloodLimit, BytesPerSecond: int(f.FloodBytes)}
}

// Fleet is a run over several servers of the hosts' config files at once:
// the manager, with the targets its servers were resolved into.
type Fleet struct {
	*manager.Manager
	// StateDir is the user's state folder (the manager's state file and
	// the last failure report).
	StateDir string

	env     *cmdutil.Env
	flags   *Flags
	targets map[string]*Target
	held    []string // the servers the start rule left out (FleetFlags.StartsEvery)
	secrets *SecretSink
	record  string // the server whose client --record follows
	rec     *capture.Recorder
	// onClient, when set, also sees each new client before it connects
	// (the UI subscribes there).
	onClient func(name string, c *client.Client)
	// tracers are the --trace printers of the clients started, each line
	// led by its server's name (traceMu keeps lines whole).
	tmu      sync.Mutex
	tracers  []*tracer
	traceMu  sync.Mutex
	otlp     *Telemetry // --otlp-endpoint (nil: none); closed once, by WaitTrace
	otlpDone sync.Once
}

// trace starts the --trace printer of server name's client c.
func (m *Fleet) trace(name string, c *client.Client) {
	red, err := redactor(m.flags, m.targets[name], m.secrets)
	if err != nil {
		return // the same redactor was built for the first server's options
	}
	tr := startTracer(c, &linePrefix{w: m.env.Err, mu: &m.traceMu, prefix: name + " "}, red, m.flags)
	m.tmu.Lock()
	m.tracers = append(m.tracers, tr)
	m.tmu.Unlock()
}

// linePrefix writes each whole line (the tracer writes one per call) with
// its server's name first, one writer at a time.
type linePrefix struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
}

func (l *linePrefix) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := io.WriteString(l.w, l.prefix); err != nil {
		return 0, err
	}
	return l.w.Write(p)
}

// NotApproved are the names of the project servers --all left out as no
// one approved them (FleetFlags.StartsEvery), in the order of the files.
func (m *Fleet) NotApproved() []string { return append([]string(nil), m.held...) }

// OnClient sets a hook that sees each new client before it connects.
// Call it before anything is started.
func (m *Fleet) OnClient(fn func(name string, c *client.Client)) { m.onClient = fn }

// Describe is the transport's name and the command line or URL of server
// name, for display.
func (m *Fleet) Describe(name string) (kind, what string) {
	t := m.targets[name]
	if t == nil {
		return "", ""
	}
	if t.URL != "" {
		return "http", t.URL
	}
	line := strings.Join(t.Argv, " ")
	for _, h := range t.Hide {
		if h != "" {
			line = strings.ReplaceAll(line, h, transport.Redacted)
		}
	}
	return "stdio", line
}

// OpenFleet resolves the servers of --all (every server found) or of each
// --server into a manager; nothing is started. n is the number of the
// command's own arguments (no "--" command and no --url are taken).
// Servers whose entry cannot be resolved are skipped with a warning under
// --all, and are a usage error when named.
func OpenFleet(cmd *cobra.Command, env *cmdutil.Env, f *Flags, mf *FleetFlags, args []string, n int, wrongCount string) ([]string, *Fleet, error) {
	if err := validateFleet(cmd, f, mf, args, n, wrongCount); err != nil {
		return nil, nil, err
	}
	h, found, err := LoadHosts(f.Config)
	if err != nil {
		return nil, nil, err
	}
	if mf.All && len(f.Servers) > 0 {
		return nil, nil, cmdutil.Usagef("give either --all or --server NAME (once or more), not both")
	}
	chosen, held, err := chooseServers(env, h, found, f, mf)
	if err != nil {
		return nil, nil, err
	}
	m := &Fleet{env: env, flags: f, targets: map[string]*Target{}, secrets: &SecretSink{}, held: held}
	specs, err := m.resolve(cmd, h, chosen, mf.All)
	if err != nil {
		return nil, nil, err
	}
	if err := m.start(cmd, mf, specs); err != nil {
		return nil, nil, err
	}
	return args, m, nil
}

// validateFleet refuses the command lines that mix several servers with
// one (--url, a "--" command), the wrong count of arguments and a
// --max-failures under 1.
func validateFleet(cmd *cobra.Command, f *Flags, mf *FleetFlags, args []string, n int, wrongCount string) error {
	if f.URL != "" {
		return cmdutil.Usagef("give either --url or several servers (--all, --server NAME ...), not both")
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash < len(args) {
		return cmdutil.Usagef("give either a server command after -- or several servers (--all, --server NAME ...), not both")
	}
	if len(args) != n {
		return cmdutil.Usagef(wrongCount)
	}
	if mf.MaxFailures < 1 {
		return cmdutil.Usagef("--max-failures must be at least 1")
	}
	return nil
}

// chooseServers are the servers of the run: under --all every server found
// but those turned off or held by the start rule (held, each said on
// stderr), else each --server.
func chooseServers(env *cmdutil.Env, h Hosts, found hostconfig.Found, f *Flags, mf *FleetFlags) (chosen []hostconfig.Server, held []string, err error) {
	if !mf.All {
		for _, name := range f.Servers {
			s, err := pickServer(found, name, f.Config)
			if err != nil {
				return nil, nil, err
			}
			chosen = append(chosen, s)
		}
		return chosen, nil, nil
	}
	var gates []Gate
	if mf.StartsEvery {
		if gates, err = h.Unnamed(found.Servers); err != nil {
			fmt.Fprintln(env.Err, "sonde: warning: "+err.Error())
		}
	}
	// A host does not run the servers it has turned off: --all skips
	// them (--server NAME still starts one).
	for i, s := range found.Servers {
		if s.Disabled {
			fmt.Fprintf(env.Err, "sonde: skipping server %s (%s): disabled there (--server %s starts it)\n", s.Name, s.Where(), s.Name)
			continue
		}
		if gates != nil && gates[i].Held {
			fmt.Fprintf(env.Err, "sonde: not starting server %s (%s): not approved: %s; approve it with %s, or name it with --server %s\n",
				textfmt.Escape(s.Name), s.Where(), textfmt.CleanBlock(gates[i].Why), textfmt.CleanBlock(gates[i].Approve), textfmt.Escape(s.Name))
			held = append(held, s.Name)
			continue
		}
		chosen = append(chosen, s)
	}
	if len(chosen) == 0 && len(held) > 0 {
		return nil, nil, cmdutil.Usagef(fmt.Sprintf("--all: no server may start without being named: %d not approved (see above)", len(held)))
	}
	if len(chosen) == 0 {
		msg := "--all: no server found in the hosts' config files (see sonde config list)"
		for _, p := range found.Problems {
			msg += "; " + p.Error()
		}
		return nil, nil, cmdutil.Usagef(msg)
	}
	return chosen, held, nil
}

// resolve turns each chosen server into its target and the manager's spec,
// a second server of one name renamed NAME~2; under --all (all) one that
// cannot be resolved is skipped with a warning.
func (m *Fleet) resolve(cmd *cobra.Command, h Hosts, chosen []hostconfig.Server, all bool) ([]manager.Spec, error) {
	var specs []manager.Spec
	seen := map[string]bool{}
	for _, s := range chosen {
		t, err := UseServer(cmd, m.flags, h, s, TermPrompter{Ctx: cmd.Context(), In: cmd.InOrStdin(), Out: cmd.ErrOrStderr()})
		if err != nil {
			if !all {
				return nil, err
			}
			fmt.Fprintf(m.env.Err, "sonde: skipping server %s (%s): %v\n", s.Name, s.Where(), err)
			continue
		}
		name := s.Name
		for i := 2; seen[name]; i++ {
			name = s.Name + "~" + strconv.Itoa(i)
		}
		if name != s.Name {
			fmt.Fprintf(m.env.Err, "sonde: server %s of %s is named %s here: another file has a server of that name\n", s.Name, s.Where(), name)
		}
		seen[name] = true
		m.targets[name] = t
		m.env.HideSecrets(t.Hide...)
		specs = append(specs, manager.Spec{Name: name, Where: s.Where(), Argv: t.Argv, URL: t.URL, Env: t.Env, Cwd: t.Cwd, Hide: t.Hide})
	}
	if len(specs) == 0 {
		return nil, cmdutil.Usagef("no server could be resolved")
	}
	return specs, nil
}

// start builds the manager over specs (nothing is started yet): the
// client options, --otlp-endpoint and the hook each new client passes.
func (m *Fleet) start(cmd *cobra.Command, mf *FleetFlags, specs []manager.Spec) error {
	f := m.flags
	opts, _, err := ClientOptions(f, &Target{})
	if err != nil {
		return err
	}
	// --otlp-endpoint: every server's session is exported, as one server's.
	if m.otlp, err = OpenTelemetry(cmd.Context(), f, &Target{}, m.secrets); err != nil {
		return err
	}
	m.otlp.Client(&opts)
	if p, err := paths.Current(); err == nil {
		m.StateDir = p.State
	}
	mopts := manager.Options{
		Client: opts,
		Dial:   m.dial,
		Policy: manager.Policy{MaxFailures: mf.MaxFailures},
		OnClient: func(name string, c *client.Client) {
			cmdutil.LiveFrom(cmd.Context()).Add(c)
			if m.rec != nil && name == m.record {
				m.rec.Follow(c)
			}
			m.otlp.Follow(c)
			if m.onClient != nil {
				m.onClient(name, c)
			}
			if f.Trace {
				m.trace(name, c)
			}
		},
	}
	if m.StateDir != "" {
		mopts.StatePath = filepath.Join(m.StateDir, manager.StateFile)
	}
	if m.Manager, err = manager.New(specs, mopts); err != nil {
		return cmdutil.Usagef(err.Error())
	}
	if err := m.StateError(); err != nil {
		fmt.Fprintln(m.env.Err, "sonde: warning: "+err.Error())
	}
	return nil
}

// dial reaches the server of spec s as its target says (a command, or a
// URL with the HTTP flags).
func (m *Fleet) dial(s manager.Spec) (client.Dialer, error) {
	t := m.targets[s.Name]
	_, cfg, err := ClientOptions(m.flags, t)
	if err != nil {
		return nil, err
	}
	d, _, _, err := Dial(m.flags, t, cfg, OAuthHooks{Prompt: PrintPrompt(m.env.Err, m.flags), Grant: m.env.SetAuthGrant}, m.secrets)
	return d, err
}

// Record follows the client of server name into the --record capture (one
// server's session: the one a call goes to).
func (m *Fleet) Record(name string) error {
	if m.flags.Record == "" {
		return nil
	}
	rec, err := startRecorder(m.flags, m.targets[name], m.secrets)
	if err != nil {
		return err
	}
	m.rec, m.record = rec, name
	return nil
}

// Run runs fn over the servers, then stops them: an end of ctx (Ctrl-C)
// first aborts every call with its reason, then closes the servers. With
// --json, a failure with a code is also reported on stdout.
func (m *Fleet) Run(ctx context.Context, fn func(ctx context.Context) error) error {
	stop := context.AfterFunc(ctx, func() {
		m.Stop(&manager.Reason{Kind: manager.UserCancel, Detail: "interrupted"})
	})
	err := fn(ctx)
	stop()
	m.Stop(nil)
	m.WaitTrace()
	if m.rec != nil {
		ReportCapture(m.env.Err, m.flags.Record, m.rec.Close())
	}
	return err
}

// WaitTrace waits for the --trace printers to have printed every event,
// and sends what the OpenTelemetry export holds (after Stop, which ends
// their clients).
func (m *Fleet) WaitTrace() {
	m.tmu.Lock()
	trs := m.tracers
	m.tmu.Unlock()
	for _, tr := range trs {
		tr.wait()
	}
	m.otlpDone.Do(func() { m.otlp.Close(m.env.Err) })
}

// ReportPaths are where the report of a failed call goes: the user's
// last report, and beside the --record capture (FILE.report.json).
func (m *Fleet) ReportPaths() []string { return reportPaths(m.StateDir, m.flags.Record) }

// ReportPaths are where the failure report of a failed call on one server
// goes (sonde call TOOL -- CMD): as with several servers.
func ReportPaths(f *Flags) []string {
	state := ""
	if p, err := paths.Current(); err == nil {
		state = p.State
	}
	return reportPaths(state, f.Record)
}

func reportPaths(stateDir, record string) []string {
	var out []string
	if stateDir != "" {
		out = append(out, filepath.Join(stateDir, manager.ReportFile))
	}
	if record != "" {
		out = append(out, strings.TrimSuffix(record, filepath.Ext(record))+".report.json")
	}
	return out
}
