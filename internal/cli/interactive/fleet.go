package interactive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/manager"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/servers"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// runFleetUI is `sonde --all` (or several --server): the server list
// (ui/servers), where nothing runs until a server is opened (or started
// with p, or named with --prewarm); enter starts that server and opens the
// fleet inspector over all of them (ui.Options.Servers: the tools of
// the running ones as server/tool, a server not running started when its
// row in Tools is picked), and quitting the inspector comes back to the
// list, the servers still running. Starts and restarts (ctrl+r in the inspector) go through
// the manager, so its policy decides: a server backing off is waited for,
// a quarantined one refused until approved (ctrl+r in the list). On the
// way out every call is aborted, then every server closed.
func runFleetUI(cmd *cobra.Command, env *cmdutil.Env, o *UIOptions, args []string) error {
	ctx := cmd.Context()
	if o.Server.Record != "" {
		return cmdutil.Usagef("--record follows one server's session: with several servers, record from the headless sonde call SERVER/TOOL --all, or open one server with --server NAME")
	}
	_, m, err := connect.OpenFleet(cmd, env, &o.Server, &o.Fleet, args, 0, "sonde takes no arguments with several servers (--all, --server NAME...)")
	if err != nil {
		return err
	}
	for _, n := range o.Prewarm {
		if !slices.Contains(m.Names(), n) {
			return cmdutil.Usagef(fmt.Sprintf("--prewarm %s: no such server among those chosen (%v)", n, m.Names()))
		}
	}
	subs := &uiSubs{}
	m.OnClient(subs.onClient)
	stop := context.AfterFunc(ctx, func() { m.Stop(&manager.Reason{Kind: manager.UserCancel, Detail: "interrupted"}) })
	var warm sync.WaitGroup
	defer func() {
		stop()
		m.Stop(nil)
		m.WaitTrace()
		warm.Wait()
		subs.closeAll()
	}()
	if len(o.Prewarm) > 0 {
		warm.Go(func() { m.Prewarm(ctx, o.Prewarm...) })
	}
	palette, noColor := termPalette()
	src := managerSource{m: m, ctx: ctx}
	note, last := "", ""
	var insp *ui.Model
	for {
		list := servers.New(servers.Options{Source: src, Styles: theme.New(palette), Note: note, Select: last})
		p := tea.NewProgram(list, tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
		if _, err := p.Run(); err != nil {
			return interrupted(err)
		}
		name, ok := list.Chosen()
		if !ok {
			return nil
		}
		note, last = "", name
		if err := inspect(ctx, env, o, m, subs, &insp, name, palette, noColor); err != nil {
			var st *cmdutil.ExitStatus
			if errors.As(err, &st) {
				return err
			}
			note = name + ": " + err.Error()
		}
	}
}

// inspect starts server name (or reuses it) through the manager, then runs
// the fleet inspector over every server: *insp, made the first time
// and run again by each later program, so its panes keep what they showed.
func inspect(ctx context.Context, env *cmdutil.Env, o *UIOptions, m *connect.Fleet, subs *uiSubs, insp **ui.Model, name string, palette theme.Palette, noColor bool) error {
	// A server backing off is not waited for here, with the list gone and
	// nothing drawn: the list says how long is left (p waits for it).
	if st, _ := statusOf(m, name); st.State == manager.BackingOff {
		return fmt.Errorf("backing off after %d failures in a row: it may start again in %s (p starts it then)", st.Failures, textfmt.Dur(time.Until(st.NextTry).Round(time.Second)))
	}
	subs.want(name) // its events from the first, the handshake's frames too
	if _, err := m.Client(ctx, name); err != nil {
		subs.drop(name)
		return err
	}
	if *insp == nil {
		policies, err := o.policies() // checked in RunUI
		if err != nil {
			return err
		}
		*insp = ui.New(ui.Options{
			Servers: uiServers{m: m, ctx: ctx, subs: subs}, Command: "--all",
			Palette: palette, NoColor: noColor, FrameCapacity: o.Frames, Policies: policies,
			CallTarget: fleetCallArgs(o),
		})
	}
	p := tea.NewProgram(*insp, tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
	_, err := p.Run()
	subs.closeAll() // the servers run on; nobody reads their events now
	return interrupted(err)
}

// uiServers is the fleet inspector's view of the manager.
type uiServers struct {
	m    *connect.Fleet
	ctx  context.Context
	subs *uiSubs
}

func (s uiServers) Names() []string { return s.m.Names() }

func (s uiServers) Running(name string) bool {
	st, ok := statusOf(s.m, name)
	return ok && st.State == manager.Ready
}

func (s uiServers) Start(name string) (ui.Conn, error) {
	s.subs.want(name)
	c, err := s.m.Client(s.ctx, name)
	if err != nil {
		s.subs.drop(name)
		return ui.Conn{}, err
	}
	st, _ := statusOf(s.m, name)
	return ui.Conn{Client: c, Sub: s.subs.take(name, c), Pid: st.Pid}, nil
}

func (s uiServers) Waiting(name string) string {
	st, _ := statusOf(s.m, name)
	switch st.State {
	case manager.BackingOff:
		return fmt.Sprintf("backing off after %d failures in a row: next try in %s", st.Failures, textfmt.Dur(time.Until(st.NextTry).Round(time.Second)))
	case manager.Quarantined:
		return "quarantined: " + st.Why
	}
	return ""
}

// statusOf is server name's status as the manager sees it now; ok is false
// for a name it does not know.
func statusOf(m *connect.Fleet, name string) (st manager.Status, ok bool) {
	for _, st := range m.Status() {
		if st.Name == name {
			return st, true
		}
	}
	return manager.Status{}, false
}

func (s uiServers) Aggregate(names []string, lists [][]mcp.Tool) []ui.NamedTool {
	entries := manager.Aggregate(names, lists)
	out := make([]ui.NamedTool, len(entries))
	for i, e := range entries {
		out[i] = ui.NamedTool{Server: e.Server, Name: e.Name, Tool: e.Tool, Conflicts: e.Conflicts}
	}
	return out
}

// interrupted is the exit of a program that ended with an interrupt.
func interrupted(err error) error {
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "interrupted"}
	}
	return err
}

// uiSubs are the UI's subscriptions: the ones made for the servers the UI
// waits for, from their first event (the manager's OnClient hook), and
// the others made when the UI takes a client already running.
type uiSubs struct {
	mu      sync.Mutex
	waiting map[string]bool
	ready   map[*client.Client]*client.Subscription
	all     []*client.Subscription
}

func (s *uiSubs) want(name string) {
	s.mu.Lock()
	if s.waiting == nil {
		s.waiting = map[string]bool{}
	}
	s.waiting[name] = true
	s.mu.Unlock()
}

func (s *uiSubs) drop(name string) {
	s.mu.Lock()
	delete(s.waiting, name)
	s.mu.Unlock()
}

func (s *uiSubs) onClient(name string, c *client.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.waiting[name] {
		return
	}
	if s.ready == nil {
		s.ready = map[*client.Client]*client.Subscription{}
	}
	sub := c.Subscribe(1 << 16)
	s.ready[c] = sub
	s.all = append(s.all, sub)
}

// take is the subscription of c: the one made at its start, or a new one.
func (s *uiSubs) take(name string, c *client.Client) *client.Subscription {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, name)
	if sub := s.ready[c]; sub != nil {
		delete(s.ready, c)
		return sub
	}
	sub := c.Subscribe(1 << 16)
	s.all = append(s.all, sub)
	return sub
}

func (s *uiSubs) closeAll() {
	s.mu.Lock()
	all := s.all
	s.all, s.ready = nil, nil
	s.mu.Unlock()
	for _, sub := range all {
		sub.Close()
	}
}

// managerSource is the server list's view of the manager.
type managerSource struct {
	m   *connect.Fleet
	ctx context.Context
}

func (s managerSource) Rows() []servers.Row {
	sts := s.m.Status()
	rows := make([]servers.Row, len(sts))
	for i, st := range sts {
		rows[i] = servers.Row{Name: st.Name, Where: st.Where, State: string(st.State), Failures: st.Failures,
			NextTry: st.NextTry, Why: st.Why, Changed: st.Changed, Pid: st.Pid}
	}
	return rows
}

func (s managerSource) Prewarm(name string) error {
	_, err := s.m.Client(s.ctx, name)
	return err
}

func (s managerSource) Approve(name string) error { return s.m.Approve(name) }

func (s managerSource) Tools() ([]servers.ToolRow, error) {
	entries, errs := s.m.RunningTools(s.ctx)
	rows := make([]servers.ToolRow, len(entries))
	for i, e := range entries {
		rows[i] = servers.ToolRow{Name: e.Name, Server: e.Server, Description: e.Tool.Description, Conflicts: e.Conflicts}
	}
	for _, n := range s.m.Names() {
		if err := errs[n]; err != nil {
			return rows, fmt.Errorf("%s: %w", n, err)
		}
	}
	return rows, nil
}

func (s managerSource) Report(name string) string { return reportText(s.m, name) }

func (s uiServers) Report(name string) string { return reportText(s.m, name) }

// reportText is the text of server name's last failure report, "" when it
// has none.
func reportText(m *connect.Fleet, name string) string {
	r := m.ServerReport(name)
	if r == nil {
		return ""
	}
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}

// fleetCallArgs are the arguments of sonde call that route SERVER/TOOL to
// one of these servers (the Tools pane's Y).
func fleetCallArgs(o *UIOptions) []string {
	var out []string
	if c := o.Server.Config; c != "" {
		out = append(out, "--config", c)
	}
	if o.Fleet.All {
		return append(out, "--all")
	}
	for _, n := range o.Server.Servers {
		out = append(out, "--server", n)
	}
	return out
}
