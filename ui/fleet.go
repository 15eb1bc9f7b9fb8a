package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// Servers is what the fleet inspector (Options.Servers: sonde --all,
// several --server) needs of the servers it shows; the command line
// implements it over the manager. Start and Aggregate run in commands.
type Servers interface {
	// Names are the servers, in their order.
	Names() []string
	// Running reports whether name runs now: the inspector takes its
	// client when it opens, starting nothing.
	Running(name string) bool
	// Start starts name (or takes it when it runs) and subscribes to its
	// client, without the handshake: a lazy start through the manager,
	// whose policy decides (it waits while the server backs off, and is
	// refused while it is quarantined).
	Start(name string) (Conn, error)
	// Waiting says what the policy makes a start of name do now ("backing
	// off: next try in 4s"), "" when it starts at once.
	Waiting(name string) string
	// Aggregate names the tools of the servers listed (lists[i] are
	// names[i]'s) as server/tool, each with the other servers that have a
	// tool of the same name: the rule of sonde tools --all.
	Aggregate(names []string, lists [][]mcp.Tool) []NamedTool
	// Report is the text of the failure report of name's last failure in
	// this run (a start that failed, a process that ended), "" when it has
	// none. Called from a command.
	Report(name string) string
}

// NamedTool is one tool of one server in the fleet's list.
type NamedTool struct {
	Server string
	// Name is "server/tool".
	Name      string
	Tool      mcp.Tool
	Conflicts []string
}

// fleet is the mode of several servers at once (the fleet inspector): one
// entry per server.
type fleet struct {
	m     *Model // the root it shows the servers in
	src   Servers
	names []string
	srv   map[string]*srvState
	only  string // the server the panes show ("" for all)
	note  string // what the last start or restart did, for the status bar
	// named maps a namespaced tool to its server and tool.
	named map[string]NamedTool
}

// srvState is one server of the fleet inspector.
type srvState struct {
	gen    int // bumped by each restart of this server
	sess   Conn
	conn   connState
	asked  bool // a start was asked (it may be under way)
	tools  []mcp.Tool
	listed bool
	missed uint64
}

// srvMsg is a message of one server's session (startedMsg,
// initializedMsg, toolsListedMsg, eventsMsg, subClosedMsg).
type srvMsg struct {
	server string
	msg    tea.Msg
}

// forServer tags the message of cmd with its server.
func forServer(name string, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return srvMsg{server: name, msg: cmd()} }
}

// newFleet is the fleet mode of m over the servers of src.
func newFleet(m *Model, src Servers) *fleet {
	mu := &fleet{m: m, src: src, names: src.Names(), srv: map[string]*srvState{}, named: map[string]NamedTool{}}
	for _, n := range mu.names {
		mu.srv[n] = &srvState{}
	}
	return mu
}

// open takes the servers that run already; the others wait to be
// picked. The model may be run again by a new program after its last one
// ended (the inspector opened again from the server list, its panes kept):
// the subscriptions of that run are closed, so each server's session is
// taken again, under a new generation.
func (f *fleet) open() tea.Cmd {
	f.m.quitted, f.m.confirmQuit, f.m.stale = false, false, true
	again := false
	var cmds []tea.Cmd
	for _, n := range f.names {
		s := f.srv[n]
		if s.asked || s.sess.Client != nil {
			again = true
			s.gen++
			s.asked, s.sess, s.conn = false, Conn{}, connState{}
		}
		if !f.src.Running(n) {
			s.tools, s.listed = nil, false // its row stands for it again
			continue
		}
		cmds = append(cmds, f.startServer(n))
	}
	if again {
		// What happened while the list was shown was not followed: the
		// requests then in flight settled unseen, and the calls' results
		// went to the program that ended. Pending starts again (a request
		// that settles from now on shows with its outcome), and so do
		// the Tools pane's counts of calls in flight; Frames and stderr
		// keep their history.
		f.m.pending = pending.New(f.m.styles)
		f.m.pending.SetPolicies(f.m.opts.Policies)
		f.m.pending.SetServer(f.only)
		f.m.panes[panePending] = f.m.pending
		f.m.tools.Reset()
		f.m.relayout()
	}
	f.setTools()
	return tea.Batch(cmds...)
}

// startServer starts server name (through Servers.Start, in a command)
// unless a start was asked already.
func (f *fleet) startServer(name string) tea.Cmd {
	s := f.srv[name]
	if s == nil || s.asked {
		return nil
	}
	s.asked = true
	s.conn = connState{starting: true}
	f.note = "starting " + name
	if why := f.src.Waiting(name); why != "" {
		f.note += " (" + why + ")"
	}
	f.setTools()
	src, gen := f.src, s.gen
	return forServer(name, func() tea.Msg {
		sess, err := src.Start(name)
		return startedMsg{gen: gen, sess: sess, err: err}
	})
}

// restartServer is ctrl+r on the server the panes show: a stop by the
// user, then a start that the manager's policy decides.
func (f *fleet) restartServer() tea.Cmd {
	name := f.only
	s := f.srv[name]
	if s == nil {
		f.note = "ctrl+r restarts one server: choose it with S first"
		return nil
	}
	if s.conn.restarting {
		return nil
	}
	old := s.sess
	s.gen++
	s.sess, s.asked = Conn{}, true
	s.conn = connState{starting: true, restarting: true}
	f.note = "restarting " + name
	src, gen := f.src, s.gen
	return forServer(name, func() tea.Msg {
		if old.Client != nil {
			old.Client.StopServer()
			old.Client.Close()
		}
		sess, err := src.Start(name)
		return startedMsg{gen: gen, sess: sess, err: err}
	})
}

// cycleServer is S: all servers, then each in turn, then all again.
func (f *fleet) cycleServer() {
	i := slices.Index(f.names, f.only)
	if f.only == "" || i < 0 {
		f.only = f.names[0]
	} else if i+1 < len(f.names) {
		f.only = f.names[i+1]
	} else {
		f.only = ""
	}
	f.m.pending.SetServer(f.only)
	f.m.frames.SetServer(f.only)
	f.m.stderr.SetServer(f.only)
	f.setTools()
	f.syncServerKey()
}

// syncServerKey puts the filter in the help of S.
func (f *fleet) syncServerKey() {
	shown := "all"
	if f.only != "" {
		shown = textfmt.Clean(f.only)
	}
	f.m.keys.Server.SetHelp("S", "servers: "+shown)
}

// handleServer handles a message of one server's session.
func (f *fleet) handleServer(msg srvMsg) tea.Cmd {
	s := f.srv[msg.server]
	if s == nil {
		return nil
	}
	name := msg.server
	switch in := msg.msg.(type) {
	case startedMsg:
		if in.gen != s.gen {
			return closeCmd(in.sess.Client)
		}
		s.conn.starting, s.conn.restarting = false, false
		if in.err != nil {
			s.conn.err, s.asked = in.err, false
			f.note = name + ": " + in.err.Error()
			f.setTools()
			return nil
		}
		s.sess = in.sess
		s.conn.err, s.conn.exited, s.conn.pid = nil, "", in.sess.Pid
		f.note = ""
		return tea.Batch(forServer(name, waitEvents(s.gen, in.sess.Sub)), forServer(name, initializeCmd(s.gen, in.sess.Client)))
	case initializedMsg:
		if f.dropResult(name, s, in.gen, in.err, "the handshake failed") {
			return nil
		}
		return forServer(name, listToolsCmd(s.gen, s.sess.Client))
	case toolsListedMsg:
		if f.dropResult(name, s, in.gen, in.err, "tools/list failed") {
			return nil
		}
		s.tools, s.listed = in.tools, true
		f.setTools()
		return nil
	case eventsMsg:
		return f.serverEvents(name, s, in)
	}
	return nil
}

// dropResult reports whether a result of server name is to be dropped: of a
// session a restart replaced, or a failure (noted as what failed).
func (f *fleet) dropResult(name string, s *srvState, gen int, err error, what string) bool {
	if gen != s.gen {
		return true
	}
	if err != nil {
		s.conn.err = err
		f.note = name + ": " + what + ": " + err.Error()
		return true
	}
	return false
}

// serverEvents applies a batch of one server's events, tagged with it.
func (f *fleet) serverEvents(name string, s *srvState, msg eventsMsg) tea.Cmd {
	f.m.pending.SetTag(name)
	f.m.frames.SetTag(name)
	f.m.stderr.SetTag(name)
	for _, p := range f.m.panes {
		if p != nil {
			p.Apply(msg.evs)
		}
	}
	f.m.stats.apply(msg.evs)
	if msg.gen == s.gen {
		s.missed = msg.missed
	}
	f.m.stats.missed = 0
	for _, o := range f.srv {
		f.m.stats.missed += o.missed
	}
	for _, ev := range msg.evs {
		if msg.gen == s.gen && ev.Kind == client.EvProcess && ev.Proc != nil {
			s.conn.follow(ev.Proc)
		}
	}
	return forServer(name, waitEvents(msg.gen, msg.sub))
}

// setTools gives the Tools pane the tools of the running servers as
// server/tool (conflicts flagged) and a row for each server not running
// that stands for its tools (enter starts it), only the filtered server's
// when the panes show one.
func (f *fleet) setTools() {
	var names []string
	var lists [][]mcp.Tool
	for _, n := range f.names {
		if s := f.srv[n]; s.listed {
			names, lists = append(names, n), append(lists, s.tools)
		}
	}
	agg := f.src.Aggregate(names, lists)
	clear(f.named)
	var rows []tools.Row
	for _, t := range agg {
		f.named[t.Name] = t
		if f.only != "" && t.Server != f.only {
			continue
		}
		tool := t.Tool
		tool.Name = t.Name
		r := tools.Row{Tool: tool}
		if len(t.Conflicts) > 0 {
			r.Warn = "conflict: also in " + strings.Join(t.Conflicts, ", ")
		}
		rows = append(rows, r)
	}
	for _, n := range f.names {
		s := f.srv[n]
		if s.listed || f.only != "" && n != f.only {
			continue
		}
		desc := "not started: enter starts it (its tools are listed once it runs)"
		switch {
		case s.conn.err != nil:
			desc = "did not start: " + s.conn.err.Error() + " (enter tries again: the restart policy decides)"
		case s.asked:
			desc = "starting…"
		}
		rows = append(rows, tools.Row{Tool: mcp.Tool{Name: n + "/…", Description: desc}, Start: n})
	}
	f.m.tools.SetRows(rows, time.Time{})
}

// call routes a call of server/tool to its server's client.
func (f *fleet) call(msg tools.CallMsg) tea.Cmd {
	t, ok := f.named[msg.Tool]
	if !ok {
		return nil
	}
	s := f.srv[t.Server]
	if s == nil || s.sess.Client == nil {
		f.note = t.Server + " is not running: ctrl+r (with S on it) starts it again"
		return nil
	}
	c := s.sess.Client
	cmd := callToolCmd(c, t.Tool.Name, msg.Args, t.Tool.ReadOnly())
	if t.Tool.TaskRequired() {
		cmd = callToolTaskCmd(c, t.Tool.Name, msg.Args)
	}
	gen := f.m.gen
	return func() tea.Msg {
		res, _ := cmd().(tools.ResultMsg)
		res.Tool = msg.Tool
		return toolDoneMsg{gen: gen, call: msg, res: res}
	}
}

// Can allows what one server's session does, sent to the server it
// names; what only one server's own inspector shows is not here.
func (f *fleet) Can(a action) (bool, string) {
	switch a {
	case actCancelTask:
		return false, "a task's row does not say its server: its own inspector cancels it (sonde --server)"
	case actAnswer:
		return false, "answering a server's request needs its own inspector: sonde --server"
	case actListFeatures, actRead, actGetPrompt, actSubscribe, actSetLevel, actComplete:
		return false, "resources and prompts are one server's: sonde --server"
	case actRecord:
		return false, "recording is one server's: sonde --server"
	case actRoots:
		return false, "roots are one server's: sonde --server"
	case actFaults:
		return false, "fault rules are a watched tap's (sonde watch)"
	case actBreaks, actBreak:
		return false, "breakpoints are one server's: sonde --server NAME --break Q"
	case actExport:
		return false, "an export is one server's recording: sonde --server NAME --record FILE"
	}
	return true, ""
}

func (f *fleet) refuse(why string) { f.note = why }

// do sends the request to the server it names.
func (f *fleet) do(_ action, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tools.StartMsg:
		return f.startServer(msg.Server)
	case tools.CallMsg:
		return f.call(msg)
	case tools.RefreshMsg:
		var cmds []tea.Cmd
		for _, n := range f.names {
			if s := f.srv[n]; s.sess.Client != nil {
				cmds = append(cmds, forServer(n, listToolsCmd(s.gen, s.sess.Client)))
			}
		}
		return tea.Batch(cmds...)
	case pending.CancelMsg:
		if s := f.srv[msg.Server]; s != nil && s.sess.Client != nil {
			return cancelCmd(s.sess.Client, msg.ID)
		}
	}
	return nil
}

// status is the status bar's account of the servers: each one's
// state, then what the last start did. When the servers' states would not
// fit on the line (beside "sonde" and a margin), they are counted by state
// instead, with the server S shows (if any) named.
func (f *fleet) status(width int) []string {
	st := f.m.styles
	out := make([]string, 0, len(f.names)+1)
	counts := map[string]int{}
	var order []string
	shown := ""
	total := 0
	for _, n := range f.names {
		word, text, style := f.serverState(n)
		if counts[word] == 0 {
			order = append(order, word)
		}
		counts[word]++
		text = style.Render(text)
		if n == f.only {
			shown = text
		}
		total += lipgloss.Width(text) + 3
		out = append(out, text)
	}
	if total > width-12 && len(f.names) > 1 {
		var parts []string
		for _, w := range order {
			parts = append(parts, fmt.Sprintf("%d %s", counts[w], w))
		}
		out = []string{fmt.Sprintf("%d servers: %s", len(f.names), strings.Join(parts, ", "))}
		if shown != "" {
			out = append([]string{shown}, out...)
		}
	}
	if f.note != "" {
		out = append(out, st.Info.Render(textfmt.Clean(f.note)))
	}
	return out
}

// serverState is server name's state: a word to count it by, the text
// that names it, and its style.
func (f *fleet) serverState(name string) (word, text string, style lipgloss.Style) {
	st, s := f.m.styles, f.srv[name]
	n := textfmt.Clean(name)
	switch {
	case s.conn.err != nil:
		return "failed", n + " failed", st.Error
	case s.conn.restarting:
		return "restarting", n + " restarting…", st.Warn
	case s.conn.starting:
		return "starting", n + " starting…", st.Warn
	case s.conn.exited != "":
		return "exited", n + " exited: " + s.conn.exited, st.Error
	case s.sess.Client != nil && s.conn.pid != 0:
		return "running", fmt.Sprintf("%s pid %d", n, s.conn.pid), st.Text
	case s.sess.Client != nil:
		return "running", n + " ready", st.Text
	}
	return "not started", n + " not started", st.Subtle
}
