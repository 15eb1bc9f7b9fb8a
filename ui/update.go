package ui

import (
	"errors"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/lesson"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Update routes messages: window and clock to everything, keys to the
// global keymap or the focused pane, mouse to the pane under the pointer,
// client events to every pane, and pane requests to commands.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if t, ok := msg.(tickMsg); ok {
		return m, m.ticked(time.Time(t))
	}
	m.stale = true
	_, cmd := m.update(msg)
	m.formRoom()
	m.syncHold()
	return m, cmd
}

// update is Update before the hold of the deadlines follows the dialogs.
func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if cmd, ok := m.updateDialog(msg); ok {
		return m, cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.relayout()
		return m, nil
	case tea.BackgroundColorMsg:
		if !m.opts.NoColor {
			p := theme.Dark()
			if !msg.IsDark() {
				p = theme.Light()
			}
			*m.styles = *theme.New(p)
			m.applyHelpStyles()
			m.frames.Restyle()
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.PasteMsg:
		if p := m.panes[m.focus]; p != nil {
			return m, p.Update(msg)
		}
		return m, nil
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m, m.handleMouse(msg.(tea.MouseMsg))
	case eventsMsg:
		return m, m.handleEvents(msg)
	case subClosedMsg:
		return m, nil
	case recordMsg:
		m.rec.apply(msg)
		syncKeys(&m.keys, m.mode) // X exports what R recorded
	case exportMsg:
		m.exp.apply(msg)
		return m, nil
	case replayLoadedMsg:
		return m, m.rp.replayLoaded(msg)
	case replayTickMsg:
		return m, m.rp.replayTicked(msg)
	case toolDoneMsg:
		return m, m.toolDone(msg)
	case srvMsg:
		return m, m.fl.handleServer(msg)
	case reportMsg:
		m.showReport(msg)
		return m, nil
	case faultsMsg:
		m.showFaults(msg)
		return m, nil
	case breaksMsg, breaksChangedMsg, heldOpenMsg, breakpointsOpenMsg, editorDoneMsg:
		return m, m.handleBreaks(msg)
	}
	if a, ok := requestAction(msg); ok {
		return m, m.request(a, msg)
	}
	if m.wt != nil {
		if cmd, ok := m.wt.watchMsg(msg); ok {
			return m, cmd
		}
	}
	if cmd, ok := m.handleSession(msg); ok {
		return m, cmd
	}
	if cmd, ok := m.handleFeatureMsg(msg); ok {
		return m, cmd
	}
	return m, m.handlePaneMsg(msg)
}

// handleSession handles the messages of the server's life.
func (m *Model) handleSession(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case startedMsg:
		if msg.gen != m.gen {
			// Closing waits for the server to stop: not in Update.
			return closeCmd(msg.sess.Client), true
		}
		m.conn.starting, m.conn.restarting = false, false
		if msg.err != nil {
			m.conn.err = msg.err
			m.tools.SetUnavailable("No tools: the server did not start.", msg.err.Error())
			m.endAuthorize()
			return nil, true
		}
		m.sess = msg.sess
		m.conn.err, m.conn.exited = nil, ""
		return tea.Batch(waitEvents(m.gen, msg.sess.Sub), initializeCmd(m.gen, msg.sess.Client)), true
	case AuthorizeMsg:
		m.showAuthorize(msg)
		return nil, true
	case initializedMsg:
		if msg.gen != m.gen {
			return nil, true
		}
		m.endAuthorize() // the handshake it waited for has ended
		if msg.err != nil {
			m.conn.err = msg.err
			m.tools.SetUnavailable("No tools: the handshake failed.", msg.err.Error())
			return nil, true
		}
		m.conn.server, m.conn.protocol = msg.res.ServerInfo, msg.res.ProtocolVersion+" "+string(msg.era)
		m.instr.set(msg.res.Instructions)
		cmds := []tea.Cmd{listToolsCmd(m.gen, m.sess.Client), listFeaturesCmd(m.gen, m.sess.Client)}
		if m.lesson != nil {
			m.lesson.Attach(m.sess.Client)
		}
		return tea.Batch(cmds...), true
	case toolsListedMsg:
		if msg.gen != m.gen {
			return nil, true
		}
		if msg.err != nil {
			m.conn.err = msg.err
			m.tools.SetUnavailable("No tools: tools/list failed.", msg.err.Error())
			return nil, true
		}
		m.tools.SetToolsAsOf(msg.tools, msg.asked)
		return nil, true
	}
	return nil, false
}

// handlePaneMsg handles what a pane asks of the root (not of the session:
// requestAction's messages go to the mode), and routes the rest.
func (m *Model) handlePaneMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case pending.ShowFramesMsg:
		if m.fl != nil {
			m.frames.FilterRequest(msg.Server, msg.ID)
		} else {
			m.frames.FilterID(msg.ID)
		}
		m.setFocus(paneFrames)
		return nil
	case lesson.RestartMsg:
		return m.restart()
	}
	// Anything else belongs to a pane (its own ticks, results): route it to
	// all of them, by owner rather than by focus.
	var cmds []tea.Cmd
	for _, p := range m.panes {
		if p != nil {
			cmds = append(cmds, p.Update(msg))
		}
	}
	return tea.Batch(cmds...)
}

// handleEvents applies a batch to every pane and re-arms the pump. Events
// of a session replaced by a restart are still applied (its requests'
// outcomes belong in the history) until its subscription closes.
func (m *Model) handleEvents(msg eventsMsg) tea.Cmd {
	for _, p := range m.panes {
		if p != nil {
			p.Apply(msg.evs)
		}
	}
	m.stats.apply(msg.evs)
	breaks := m.brk.noted(msg.evs, m.now)
	m.trackAsks(msg.evs, msg.gen)
	m.trackElicitComplete(msg.evs, msg.gen)
	if msg.gen != m.gen {
		return waitEvents(msg.gen, msg.sub)
	}
	m.stats.missed = msg.missed
	for _, ev := range msg.evs {
		if ev.Kind == client.EvRequest && ev.Req != nil && errors.Is(ev.Req.Err, client.ErrExpired) && !m.conn.restarting {
			if m.opts.Reconnect {
				return tea.Batch(waitEvents(msg.gen, msg.sub), m.restart())
			}
			m.conn.expired = true
		}
		if ev.Kind == client.EvProcess && ev.Proc != nil {
			m.conn.follow(ev.Proc)
		}
	}
	return tea.Batch(waitEvents(msg.gen, msg.sub), m.featuresRefresh(msg.evs), breaks)
}

func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	focused := m.panes[m.focus]
	capturing := focused != nil && focused.Capturing()
	if msg.String() == "ctrl+c" {
		return m.quit()
	}
	m.instr.seen()
	if m.showHelp {
		if key.Matches(msg, m.keys.Help) || msg.String() == "esc" || key.Matches(msg, m.keys.Quit) {
			m.showHelp = false
		}
		return nil
	}
	if m.rp != nil && m.rp.asking != promptNone {
		return m.rp.promptKey(msg)
	}
	if m.confirmQuit {
		// Quitting with requests in flight: q (or y) again quits, any
		// other key stays (and does nothing more, unless what was in
		// flight has settled meanwhile and the question is gone).
		m.confirmQuit = false
		if key.Matches(msg, m.keys.Quit) || msg.String() == "y" {
			return m.quit()
		}
		if m.pending.InFlight() > 0 {
			return nil
		}
	}
	// A key the focused pane binds in its current mode goes to the pane,
	// ahead of a global key of the same name: q is "back" in the frame
	// detail view, n "next problem" in Frames rather than the lesson's next
	// step. (The lesson pane's own keys are the global lesson keys.)
	if m.focus != paneLesson && binds(focused, msg) {
		return focused.Update(msg)
	}
	if !capturing && m.rp != nil {
		if cmd, ok := m.rp.replayKey(msg); ok {
			return cmd
		}
	}
	if !capturing {
		if cmd, ok := m.globalKey(msg); ok {
			return cmd
		}
	}
	if focused == nil {
		return nil
	}
	return focused.Update(msg)
}

// globalKey handles a global key (the focused pane does not capture the
// keyboard); ok is false for a key that is not one, or that the mode
// refuses (then the status bar says why).
func (m *Model) globalKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	lessonKey := m.lesson != nil
	switch {
	case key.Matches(msg, m.keys.Quit):
		return m.askQuit(), true
	case key.Matches(msg, m.keys.Help):
		m.showHelp = true
		return nil, true
	case key.Matches(msg, m.keys.Next):
		m.cycleFocus(1)
		return nil, true
	case key.Matches(msg, m.keys.Prev):
		m.cycleFocus(-1)
		return nil, true
	case key.Matches(msg, m.keys.Zoom):
		m.zoom, m.autoZoom = !m.zoom, false
		m.relayout()
		return nil, true
	case key.Matches(msg, m.keys.Restart) && m.fl != nil:
		return m.fl.restartServer(), true
	case key.Matches(msg, m.keys.Restart):
		return m.restart(), true
	case key.Matches(msg, m.keys.Server):
		m.fl.cycleServer()
		return nil, true
	case key.Matches(msg, m.keys.Report):
		return m.reportCmd(), true
	case key.Matches(msg, m.keys.Faults):
		return faultsCmd(m.watchFaults(), 0, false), true
	case key.Matches(msg, m.keys.Held):
		return m.handleBreaks(heldOpenMsg{}), true
	case key.Matches(msg, m.keys.Breakpoints):
		return m.handleBreaks(breakpointsOpenMsg{}), true
	case key.Matches(msg, m.keys.Record):
		return toggleRecord(m.opts.Recorder, m.sess.Client), true
	case key.Matches(msg, m.keys.Export):
		return exportCmd(m.opts.Export, exportSource(m)), true
	case key.Matches(msg, m.keys.Roots):
		return m.openRootsCmd(), true
	case key.Matches(msg, m.keys.Focus):
		m.setFocus(int(msg.String()[0] - '1'))
		return nil, true
	case lessonKey && key.Matches(msg, m.keys.LessonNext):
		return m.lesson.Next(), true
	case lessonKey && key.Matches(msg, m.keys.FIFO):
		m.lesson.ToggleFIFO()
		return nil, true
	}
	return nil, m.refusedKey(msg)
}

// binds reports whether pane p has an enabled binding for msg.
func binds(p pane, msg tea.KeyPressMsg) bool {
	if p == nil {
		return false
	}
	for _, group := range p.Keys().FullHelp() {
		if key.Matches(msg, group...) {
			return true
		}
	}
	return false
}

func (m *Model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if m.showHelp {
		return nil // the panes are hidden behind the help screen
	}
	mouse := msg.Mouse()
	for i, r := range m.rects {
		if !r.contains(mouse.X, mouse.Y) || m.panes[i] == nil {
			continue
		}
		if _, click := msg.(tea.MouseClickMsg); click {
			m.setFocus(i)
		}
		// Coordinates relative to the pane's inner top-left (inside the border).
		inner := mouse
		inner.X, inner.Y = mouse.X-r.X-1, mouse.Y-r.Y-1
		switch msg.(type) {
		case tea.MouseClickMsg:
			return m.panes[i].Update(tea.MouseClickMsg(inner))
		case tea.MouseWheelMsg:
			return m.panes[i].Update(tea.MouseWheelMsg(inner))
		}
	}
	return nil
}

// nester is a pane with views below its top level (a detail, a result).
type nester interface{ Nested() bool }

// askQuit is q: it quits only from the top level (in a pane's detail view
// it does nothing: esc goes back), and with requests in flight it asks
// first (a live session only).
func (m *Model) askQuit() tea.Cmd {
	if n, ok := m.panes[m.focus].(nester); ok && n.Nested() {
		return nil
	}
	if m.rp == nil && m.wt == nil && m.pending.InFlight() > 0 {
		m.confirmQuit = true
		return nil
	}
	return m.quit()
}

func (m *Model) quit() tea.Cmd {
	m.quitted = true
	return tea.Quit
}

func (m *Model) restart() tea.Cmd {
	if m.conn.restarting {
		return nil
	}
	old := m.sess
	m.gen++
	m.sess = Conn{}
	m.conn = connState{starting: true, restarting: true}
	m.asks, m.urlReqs, m.dlg, m.auth = asks{}, nil, nil, nil
	// History is kept across a restart (the frames of the old process stay,
	// and stderr shows where one process ended and the next began); panes
	// forget only per-process state.
	for i, p := range m.panes {
		if p != nil && i != paneFrames {
			p.Reset()
		}
	}
	return m.restartCmd(old, m.gen)
}

func (m *Model) cycleFocus(d int) {
	for i := 1; i <= paneCount; i++ {
		next := (m.focus + d*i + paneCount*2) % paneCount
		if m.visible(next) {
			m.setFocus(next)
			return
		}
	}
}

func (m *Model) setFocus(i int) {
	if !m.visible(i) {
		return
	}
	m.focus = i
	m.relayout() // zoomed, or on a short terminal, the layout follows the focus
}

func (m *Model) relayout() {
	m.rects = layout(m.width, m.height, m.focus, m.zoom, m.lesson != nil)
	for i, r := range m.rects {
		if m.panes[i] != nil {
			m.panes[i].SetSize(max(r.W-2, 0), max(r.H-2, 0))
		}
	}
	m.help.SetWidth(m.width)
	m.sizeDialog()
}

// follow notes a process event of the server: its pid, how it ended.
func (c *connState) follow(p *client.ProcInfo) {
	switch p.What {
	case client.ProcStart:
		c.pid = p.Pid
	case client.ProcExit:
		c.exited = "exited"
		if p.Exit != nil {
			c.exited = p.Exit.Status()
		}
	}
}
