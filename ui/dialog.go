package ui

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/answer"
)

// dialog is drawn over the panes and has the keyboard while it is open: a
// request from the server to answer (answer.Dialog), the URLs of a call the
// server refused with -32042 (answer.URLRequired) or the roots editor
// (answer.Roots).
type dialog interface {
	Update(msg tea.Msg) (answer.Action, tea.Cmd)
	View() string
	Title() string
	Keys() help.KeyMap
	Capturing() bool
	SetSize(w, h int)
}

// Messages of the dialogs' commands.
type (
	respondedMsg struct {
		id  jsonrpc.ID
		err error
	}
	rootsLoadedMsg struct {
		gen   int
		roots []mcp.Root
	}
	rootsSetMsg struct{ err error }
)

// asks are the current session's sampling and elicitation requests that
// wait for the user, oldest first; later holds those closed with esc (they
// open again from their row in Pending).
type asks struct {
	waiting []client.ServerRequest
	later   map[jsonrpc.ID]bool
}

// trackAsks follows the server's requests in a batch of events: a
// sampling or elicitation request that arrives waits for the user, and
// one that ends (answered, cancelled by the server, session over) leaves,
// closing its dialog. The oldest waiting request opens when no dialog is.
// Events of a session replaced by a restart are ignored: the restart
// forgot its requests, and their ids may be reused by the new session.
func (m *Model) trackAsks(evs []client.Event, gen int) {
	if gen != m.gen {
		return
	}
	for _, ev := range evs {
		r := ev.Req
		if ev.Kind != client.EvRequest || r == nil || r.Dir != client.In {
			continue
		}
		if r.State == client.StateReceived && (r.Method == mcp.MethodCreateMessage || r.Method == mcp.MethodElicit) {
			m.asks.waiting = append(m.asks.waiting, client.ServerRequest{ID: r.ID, Method: r.Method, Params: r.Params, Received: ev.Time})
			continue
		}
		if r.State.Final() {
			m.dropAsk(r.ID)
		}
	}
	m.openNextAsk()
}

// dropAsk forgets request id and closes its dialog.
func (m *Model) dropAsk(id jsonrpc.ID) {
	for i, a := range m.asks.waiting {
		if a.ID == id {
			m.asks.waiting = append(m.asks.waiting[:i], m.asks.waiting[i+1:]...)
			break
		}
	}
	delete(m.asks.later, id)
	if d, ok := m.dlg.(*answer.Dialog); ok && d.Request().ID == id {
		m.dlg = nil
	}
}

// openNextAsk opens the OAuth flow's authorization dialog while the flow
// waits (authorize.go; unless put off), else the oldest waiting request not
// put off with esc, else the oldest URL dialog waiting its turn
// (urlrequired.go): the server's requests go first, since the server waits
// for their answers.
func (m *Model) openNextAsk() {
	if m.dlg != nil {
		return
	}
	if m.auth != nil && !m.authHidden {
		m.openDialog(m.auth)
		return
	}
	for _, a := range m.asks.waiting {
		if !m.asks.later[a.ID] {
			m.openDialog(answer.New(m.styles, a))
			return
		}
	}
	m.openNextURL()
}

// openAsk opens the dialog of waiting request id (from Pending).
func (m *Model) openAsk(id jsonrpc.ID) {
	for _, a := range m.asks.waiting {
		if a.ID == id {
			delete(m.asks.later, id)
			m.openDialog(answer.New(m.styles, a))
			return
		}
	}
}

func (m *Model) openDialog(d dialog) {
	m.dlg = d
	m.sizeDialog()
}

// dialogRect is where the dialog is drawn: centred, over the lower part of
// the panes, so that the top of Pending (where the request waits) stays in
// sight.
func (m *Model) dialogRect() rect {
	avail := m.height - 2
	w := min(m.width-4, 100)
	h := min(max(12, avail*55/100), 28, avail)
	return rect{X: (m.width - w) / 2, Y: max(avail-h, 0), W: w, H: h}
}

func (m *Model) sizeDialog() {
	if m.dlg == nil {
		return
	}
	r := m.dialogRect()
	m.dlg.SetSize(max(r.W-2, 1), max(r.H-2, 1))
}

// updateDialog gives the open dialog its keys (all but ctrl+c, and ? when
// it takes no typing: the help screen with the dialog's keys), pastes and
// results; it reports false for messages that are not the dialog's.
func (m *Model) updateDialog(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case respondedMsg:
		m.answerErr = msg.err
		return nil, true
	case rootsSetMsg:
		m.answerErr = msg.err
		return nil, true
	case rootsLoadedMsg:
		if msg.gen == m.gen && m.dlg == nil {
			m.openDialog(answer.NewRoots(m.styles, msg.roots))
		}
		return nil, true
	}
	if m.dlg == nil || m.showHelp {
		return nil, false // the help screen, over the dialog, takes the keys
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			return nil, false
		}
		// The dialog has every other key, space too (in the lesson as
		// well: its footer says space toggles, and it does; the lesson
		// moves on once the dialog is answered).
		if key.Matches(msg, m.keys.Help) && !m.dlg.Capturing() {
			m.showHelp = true
			return nil, true
		}
	case tea.PasteMsg, answer.RootCheckedMsg:
	default:
		return nil, false
	}
	act, cmd := m.dlg.Update(msg)
	switch d := m.dlg.(type) {
	case *answer.Dialog:
		id := d.Request().ID
		switch act {
		case answer.Send:
			res, rpcErr := d.Answer()
			m.dropAsk(id)
			m.openNextAsk()
			return tea.Batch(cmd, respondCmd(m.sess.Client, id, res, rpcErr)), true
		case answer.Later:
			if m.asks.later == nil {
				m.asks.later = map[jsonrpc.ID]bool{}
			}
			m.asks.later[id] = true
			m.dlg = nil
			m.openNextAsk()
		}
	case *answer.URLRequired:
		return tea.Batch(cmd, m.urlDialogAction(d, act)), true
	case *answer.Authorize:
		if act == answer.Later {
			m.dlg, m.authHidden = nil, true
			m.openNextAsk()
		}
	case *heldDialog:
		if act == answer.Later {
			m.dlg, m.brk.putOff = nil, len(m.brk.st.Held) > 0
			m.openNextAsk()
		}
	case *reportDialog, *faultsDialog, *breakpointsDialog:
		if act == answer.Later {
			m.dlg = nil
			m.openNextAsk()
		}
	case *answer.Roots:
		switch act {
		case answer.Send:
			m.dlg = nil
			m.openNextAsk()
			return tea.Batch(cmd, setRootsCmd(m.sess.Client, d.List())), true
		case answer.Later:
			m.dlg = nil
			m.openNextAsk()
		}
	}
	return cmd, true
}

func respondCmd(c *client.Client, id jsonrpc.ID, res json.RawMessage, rpcErr *jsonrpc.Error) tea.Cmd {
	if c == nil {
		return nil
	}
	return func() tea.Msg { return respondedMsg{id: id, err: c.Respond(id, res, rpcErr)} }
}

func setRootsCmd(c *client.Client, roots []mcp.Root) tea.Cmd {
	if c == nil {
		return nil
	}
	return func() tea.Msg { return rootsSetMsg{err: c.SetRoots(roots)} }
}

// openRootsCmd reads the session's roots, then opens the editor.
func (m *Model) openRootsCmd() tea.Cmd {
	c, gen := m.sess.Client, m.gen
	if c == nil || m.dlg != nil {
		return nil
	}
	return func() tea.Msg { return rootsLoadedMsg{gen: gen, roots: c.Roots()} }
}

// dialogLayer draws the open dialog in a rounded, focused border.
func (m *Model) dialogLayer() *lipgloss.Layer {
	if m.dlg == nil {
		return nil
	}
	r := m.dialogRect()
	st := m.styles
	innerW, innerH := max(r.W-2, 1), max(r.H-2, 1)
	b := lipgloss.RoundedBorder()
	title := " " + m.dlg.Title() + " "
	if _, ok := m.dlg.(*answer.Dialog); ok && len(m.asks.waiting) > 1 {
		title = fmt.Sprintf(" %s · %d more waiting ", m.dlg.Title(), len(m.asks.waiting)-1)
	}
	title = textfmt.Fit(st.FocusedTitle.Render(title), min(lipgloss.Width(title), max(innerW-2, 0)))
	fill := max(innerW-1-lipgloss.Width(title), 0)
	lines := []string{st.FocusBorder.Render(b.TopLeft+b.Top) + title + st.FocusBorder.Render(strings.Repeat(b.Top, fill)+b.TopRight)}
	for _, l := range strings.Split(textfmt.Lines(m.dlg.View(), innerW, innerH), "\n") {
		lines = append(lines, st.FocusBorder.Render(b.Left)+l+st.FocusBorder.Render(b.Right))
	}
	lines = append(lines, st.FocusBorder.Render(b.BottomLeft+strings.Repeat(b.Bottom, innerW)+b.BottomRight))
	return lipgloss.NewLayer(strings.Join(lines, "\n")).X(r.X).Y(r.Y).Z(1)
}

// syncHold tells the session's client to hold its deadlines while the
// dialog of one of the server's requests is open (client.HoldDeadlines:
// the call that made the server ask does not time out while the user
// answers), and to let them run again once it closed (answered, put off
// with esc, cancelled by the server). A new session's client starts
// without a hold. It is called in Update, not in a command: commands run
// concurrently, and a hold and its release must not swap; HoldDeadlines
// only takes the client's lock (its events go to buffered subscriptions).
func (m *Model) syncHold() {
	c := m.sess.Client
	_, asking := m.dlg.(*answer.Dialog)
	if m.held != nil && (!asking || m.held != c) {
		m.held.HoldDeadlines(false)
		m.held = nil
	}
	if asking && c != nil && m.held == nil {
		c.HoldDeadlines(true)
		m.held = c
	}
}
