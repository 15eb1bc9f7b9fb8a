package ui

import (
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// toolDoneMsg is the outcome of a call made from the Tools pane, with the
// call itself (to retry it) and the session generation it was made in.
type toolDoneMsg struct {
	gen  int
	call tools.CallMsg
	res  tools.ResultMsg
}

// urlReq is a call the server refused with -32042
// (URLElicitationRequiredError): its dialog, open or waiting its turn.
type urlReq struct {
	call tools.CallMsg
	dlg  *answer.URLRequired
}

// callTool starts a call asked for by the Tools pane: as a task when the
// tool requires it. Its outcome comes back as a toolDoneMsg.
func (m *Model) callTool(msg tools.CallMsg) tea.Cmd {
	c := m.sess.Client
	if c == nil {
		return nil
	}
	t, listed := m.tools.Tool(msg.Tool)
	cmd := callToolCmd(c, msg.Tool, msg.Args, listed && t.ReadOnly())
	if listed && t.TaskRequired() {
		cmd = callToolTaskCmd(c, msg.Tool, msg.Args)
	}
	gen := m.gen
	return func() tea.Msg {
		res, _ := cmd().(tools.ResultMsg)
		return toolDoneMsg{gen: gen, call: msg, res: res}
	}
}

// toolDone hands a call's result to the panes and, when the server answered
// it with URL elicitations (MCP_URL_REQUIRED) in the current session, opens
// their dialog (or queues it behind the one open).
func (m *Model) toolDone(msg toolDoneMsg) tea.Cmd {
	cmd := m.handlePaneMsg(msg.res)
	els, ok := client.URLElicitations(msg.res.Err)
	if !ok || msg.gen != m.gen {
		return cmd
	}
	server := strings.TrimSpace(m.conn.server.Name + " " + m.conn.server.Version)
	if server == "" {
		server = "the server"
	}
	d := answer.NewURLRequired(m.styles, server, mcp.MethodToolsCall+" "+msg.call.Tool, els)
	m.urlReqs = append(m.urlReqs, urlReq{call: msg.call, dlg: d})
	m.openNextAsk()
	return cmd
}

// openNextURL opens the oldest URL dialog waiting its turn.
func (m *Model) openNextURL() {
	if m.dlg == nil && len(m.urlReqs) > 0 {
		m.openDialog(m.urlReqs[0].dlg)
	}
}

// urlDialogAction closes the open URL dialog d for Retry (the same call
// again) or Later, and opens what waits next.
func (m *Model) urlDialogAction(d *answer.URLRequired, act answer.Action) tea.Cmd {
	if act != answer.Retry && act != answer.Later {
		return nil
	}
	var call tools.CallMsg
	for i, r := range m.urlReqs {
		if r.dlg == d {
			call = r.call
			m.urlReqs = append(m.urlReqs[:i], m.urlReqs[i+1:]...)
			break
		}
	}
	m.dlg = nil
	m.openNextAsk()
	if act == answer.Retry {
		return m.callTool(call)
	}
	return nil
}

// trackElicitComplete marks done, in every URL dialog, the elicitations a
// notifications/elicitation/complete of the current session names.
func (m *Model) trackElicitComplete(evs []client.Event, gen int) {
	if gen != m.gen || len(m.urlReqs) == 0 {
		return
	}
	for _, ev := range evs {
		f := ev.Frame
		if ev.Kind != client.EvFrame || f == nil || f.Dir != client.In || f.Msg.Kind != jsonrpc.KindNotification || f.Msg.Method != mcp.MethodElicitComplete {
			continue
		}
		var p mcp.ElicitCompleteParams
		if json.Unmarshal(f.Msg.Params, &p) != nil || p.ElicitationID == "" {
			continue
		}
		for _, r := range m.urlReqs {
			r.dlg.Complete(p.ElicitationID)
		}
	}
}
