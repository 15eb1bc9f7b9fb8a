// Package interactive holds the commands that run a terminal UI: the
// interactive UI (sonde's default command, with the server picker), demo,
// and the UI over a capture (sonde replay FILE).
package interactive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/report"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/lesson"
	"github.com/sonde-mcp/sonde/ui/picker"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// UIOptions are the flags of the interactive UI: the server flags and the
// Frames pane's capacity.
type UIOptions struct {
	Server  connect.Flags
	Frames  int
	Fleet   connect.FleetFlags // --all, several --server: the server list (fleet.go)
	Prewarm []string
	// Tapped are sonde tap's sessions for the picker (the root command
	// hands them over from the tap family).
	Tapped Tapped
	// Breaks are --break, --breaks and --break-timeout: the breakpoints
	// of the session (more can be set in the UI).
	Breaks connect.BreakFlags
	// Policies are --policies: client timeout policies Pending and the
	// timeline evaluate sonde's requests under, live (docs/timeouts.md).
	Policies []string
}

// Tapped is what the picker needs of sonde tap's sessions: the live ones,
// as rows listed above the servers (picker.Item.Session set), and how to
// open one in sonde watch's inspector.
type Tapped struct {
	Live func() []picker.Item
	Open func(ctx context.Context, env *cmdutil.Env, id string) error
}

// Register adds the UI's flags to cmd (--json and --trace hidden: the UI
// shows what they would print).
func (o *UIOptions) Register(cmd *cobra.Command) {
	o.Server.Register(cmd.Flags())
	o.Server.FloodOffByDefault(cmd.Flags())
	o.Fleet.Register(cmd.Flags())
	o.Breaks.Register(cmd.Flags())
	cmd.Flags().StringArrayVar(&o.Prewarm, "prewarm", nil, "with several servers: start the server `NAME` at once instead of when it is opened (repeatable)")
	cmd.Flags().IntVar(&o.Frames, "frames", 20000, "frames kept in the Frames pane (older ones are evicted and counted)")
	cmd.Flags().StringArrayVar(&o.Policies, "policies", nil, "Pending marks the client timeout `POLICY` each call has outlived, the timeline its deadline: a preset (ts-sdk, inspector…) or timeout=D[,reset-on-progress][,max-total=D] (repeatable; docs/timeouts.md)")
	for _, hidden := range []string{"json", "trace"} {
		_ = cmd.Flags().MarkHidden(hidden)
	}
}

// RunUI is sonde's default command: the interactive UI on the server after
// "--", at --url, named by --server, or picked in the server picker; with
// none of those and no terminal, the help.
func RunUI(cmd *cobra.Command, env *cmdutil.Env, o *UIOptions, args []string) error {
	f := &o.Server
	if _, err := o.policies(); err != nil {
		return err
	}
	if o.Fleet.Fleet(f) {
		if o.Breaks.Given() {
			return cmdutil.Usagef("--break and --breaks hold one server's frames: use them with one server, not --all or several --server")
		}
		return runFleetUI(cmd, env, o, args)
	}
	if len(o.Prewarm) > 0 {
		return cmdutil.Usagef("--prewarm starts one of several servers: use it with --all or --server NAME more than once")
	}
	if f.Server != "" || f.Config != "" || (len(args) == 0 && f.URL == "") {
		return runRootFromConfig(cmd, env, o, args)
	}
	if f.URL != "" && len(args) > 0 {
		return cmdutil.Usagef("give either --url or a server command after --, not both")
	}
	if err := f.CheckInputFlag(); err != nil {
		return err
	}
	return runTUI(cmd.Context(), env, o, f.Target(args), nil)
}

// runTUI runs the interactive UI against the target's server; with
// lessonOpts, the demo's lesson pane too.
func runTUI(ctx context.Context, env *cmdutil.Env, o *UIOptions, t *connect.Target, lessonOpts *lesson.Options) error {
	f := &o.Server
	policies, err := o.policies()
	if err != nil {
		return err
	}
	copts, cfg, err := connect.ClientOptions(f, t)
	if err != nil {
		return err
	}
	// The user answers the server's requests in the UI's dialogs, so the UI
	// declares every client capability; reply files still answer first. In the
	// modern era the input requests of input_required results open the same
	// dialogs (Interactive).
	sr := &copts.ServerRequests
	sr.Roots, sr.Sampling, sr.Elicitation, sr.Interactive = true, true, true, true
	// The UI owns the terminal: the OAuth flow's authorization URL goes to
	// a dialog (the program exists by the time a server answers 401).
	// The grant line (which grant, and why) comes just before the URL.
	var prog atomic.Pointer[tea.Program]
	secrets := &connect.SecretSink{}
	dial, transportName, what, err := connect.Dial(f, t, cfg, authorizeHooks(&prog, f.OAuthTimeout), secrets)
	if err != nil {
		return err
	}
	// Every frame of the session is offered to the breakpoints' Engine;
	// the UI is its watcher: when it closes, everything held goes on.
	// Each step of a held frame is noted on the client of the moment (a
	// restart makes a new one), so the recording keeps it.
	changed := make(chan struct{}, 1)
	var current atomic.Pointer[client.Client]
	eng, err := o.Breaks.Engine(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}, func(h client.Hold) {
		if c := current.Load(); c != nil {
			c.NoteHold(hold.Text(h), h)
		}
	})
	if err != nil {
		return err
	}
	defer eng.Close()
	dial = hold.Dialer(dial, eng)
	detach := eng.Attach()
	defer detach() // before the clients close (deferred later, run first)
	rec, err := connect.RecordSwitch(f, t, secrets)
	if err != nil {
		return err
	}
	otlp, err := connect.OpenTelemetry(ctx, f, t, secrets)
	if err != nil {
		return err
	}
	otlp.Client(&copts)
	// Every client the UI starts is closed when it ends, even one whose
	// restart was still under way when the user quit; then the recording
	// under way ends.
	all := cmdutil.LiveFrom(ctx)
	defer func() {
		all.CloseAll()
		otlp.Close(env.Err)
		if path, sum, ok := rec.Stop(); ok {
			connect.ReportCapture(env.Err, path, sum)
		} else if _, _, note := rec.State(); note != "" {
			fmt.Fprintln(env.Err, "sonde: "+note)
		}
	}()
	start := func() (ui.Conn, error) {
		c := client.New(copts)
		current.Store(c)
		sub := c.Subscribe(1 << 16)
		rec.Follow(c)
		otlp.Follow(c)
		if !all.Add(c) {
			c.Close()
			return ui.Conn{}, errors.New("sonde is quitting")
		}
		if err := c.Connect(dial); err != nil {
			c.Close()
			return ui.Conn{}, err
		}
		return ui.Conn{Client: c, Sub: sub}, nil
	}
	// A server that cannot be started is reported like in every other
	// command (MCP_SPAWN, exit 7) before the UI takes the terminal.
	first, err := start()
	if err != nil {
		return err
	}
	palette, noColor := termPalette()
	opts := ui.Options{
		Start: start, First: &first, Transport: transportName, Command: what, CallTarget: t.CallArgs(f.Config),
		Palette: palette, NoColor: noColor, FrameCapacity: o.Frames, Reconnect: f.Reconnect,
		Recorder: rec, Breaks: ui.LocalBreaks(eng, changed), Export: report.Beside(cmdutil.Version),
		Policies: policies,
	}
	if lessonOpts != nil {
		opts.Lesson = demoLesson(*lessonOpts, f, t, copts, all, eng)
	}
	p := tea.NewProgram(ui.New(opts), tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
	prog.Store(p)
	_, err = p.Run()
	detach() // the UI is gone: what it held goes on now
	return interrupted(err)
}

// policies reads --policies, one policy each: a preset or a spec.
func (o *UIOptions) policies() ([]timeouts.Policy, error) {
	var ps []timeouts.Policy
	for _, s := range o.Policies {
		p, err := timeouts.ParsePolicy(s)
		if err != nil {
			return nil, cmdutil.Usagef("--policies: " + strings.TrimPrefix(err.Error(), timeouts.ErrPolicy.Error()+" "))
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// demoLesson builds the lesson of sonde demo, its modern and reorder steps
// run against the same server.
func demoLesson(lo lesson.Options, f *connect.Flags, t *connect.Target, copts client.Options, all *cmdutil.LiveClients, eng *hold.Engine) func(*theme.Styles) ui.Lesson {
	lo.Modern = modernLesson(f, t, copts, all)
	lo.Reorder = reorderLesson(f, t, copts, all)
	lo.Hold = func(expr string) error { _, err := eng.Add(expr); return err }
	return func(st *theme.Styles) ui.Lesson { return lesson.New(st, lo) }
}

// authorizeHooks send the OAuth flow's authorization URL to the UI's
// dialog, once the program exists, with the grant line (which grant, and
// why) that came just before it.
func authorizeHooks(prog *atomic.Pointer[tea.Program], wait time.Duration) connect.OAuthHooks {
	var grant atomic.Pointer[string]
	return connect.OAuthHooks{
		Grant: func(g string) { grant.Store(&g) },
		Prompt: func(authURL string) {
			if p := prog.Load(); p != nil {
				msg := ui.AuthorizeMsg{URL: authURL, Wait: wait}
				if g := grant.Load(); g != nil {
					msg.Grant = *g
				}
				p.Send(msg)
			}
		},
	}
}

// termPalette is the palette the terminal UIs open with, and whether
// NO_COLOR keeps it.
func termPalette() (theme.Palette, bool) {
	if os.Getenv("NO_COLOR") != "" {
		return theme.NoColor(), true
	}
	return theme.Dark(), false
}

// reorderLesson starts, for the lesson's reorder step, the same server
// command behind sonde tap (this executable, recording nothing) with the
// lesson's reorder rule. Over --url there is none.
func reorderLesson(f *connect.Flags, t *connect.Target, copts client.Options, all *cmdutil.LiveClients) lesson.ReorderFunc {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	return lessonStart(f, t, append([]string{self, "tap", "--no-record", "--fault", lesson.ReorderRule, "--"}, t.Argv...), copts, all)
}

// modernLesson starts, for the lesson's eras step, the same server command
// with --era modern (sonde's fixture), as a modern client that declares
// elicitation and accepts what it is asked. Over --url there is none.
func modernLesson(f *connect.Flags, t *connect.Target, copts client.Options, all *cmdutil.LiveClients) lesson.ModernFunc {
	o := copts
	o.Era, o.Inputs = client.EraModern, lesson.Accept
	o.ServerRequests = client.ServerRequests{Elicitation: true} // answered by Accept
	return lessonStart(f, t, append(append([]string(nil), t.Argv...), "--era", "modern"), o, all)
}

// lessonStart starts, for a lesson step that runs a server of its own
// beside the session, the command argv (t's, changed) as a client of
// options o, counted among the run's live clients. Over --url, or when
// argv cannot be run as t's command is, there is none (nil).
func lessonStart(f *connect.Flags, t *connect.Target, argv []string, o client.Options, all *cmdutil.LiveClients) func() (*client.Client, client.Dialer, error) {
	if t.URL != "" {
		return nil
	}
	aside := *t
	aside.Argv = argv
	_, cfg, err := connect.ClientOptions(f, &aside)
	if err != nil {
		return nil
	}
	return func() (*client.Client, client.Dialer, error) {
		c := client.New(o)
		if !all.Add(c) {
			c.Close()
			return nil, nil, errors.New("sonde is quitting")
		}
		return c, client.Stdio(cfg), nil
	}
}
