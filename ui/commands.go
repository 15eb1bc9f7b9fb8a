package ui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// Messages of the root model. Each carries the session generation it
// belongs to, so results of an old session are ignored after a restart.
type (
	startedMsg struct {
		gen  int
		sess Conn
		err  error
	}
	initializedMsg struct {
		gen int
		res *mcp.InitializeResult
		era client.Era
		err error
	}
	toolsListedMsg struct {
		gen   int
		tools []mcp.Tool
		asked time.Time // when tools/list was sent
		err   error
	}
	eventsMsg struct {
		gen    int
		sub    *client.Subscription
		evs    []client.Event
		missed uint64
	}
	subClosedMsg struct{ gen int }
	tickMsg      time.Time
)

// maxBatch bounds one batch of events (one render).
const maxBatch = 4096

// waitEvents is the one command through which client events enter: it
// blocks for one event, then drains what else is already waiting.
func waitEvents(gen int, sub *client.Subscription) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-sub.C
		if !ok {
			return subClosedMsg{gen}
		}
		evs := make([]client.Event, 1, 64)
		evs[0] = ev
	drain:
		for len(evs) < maxBatch {
			select {
			case ev, ok := <-sub.C:
				if !ok {
					break drain
				}
				evs = append(evs, ev)
			default:
				break drain
			}
		}
		return eventsMsg{gen: gen, sub: sub, evs: evs, missed: sub.Missed()}
	}
}

func tick() tea.Cmd {
	return tea.Tick(250*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) startCmd(gen int) tea.Cmd {
	start := m.opts.Start
	return func() tea.Msg {
		s, err := start()
		return startedMsg{gen: gen, sess: s, err: err}
	}
}

func initializeCmd(gen int, c *client.Client) tea.Cmd {
	return func() tea.Msg {
		res, err := c.Initialize(context.Background())
		return initializedMsg{gen: gen, res: res, era: c.Era(), err: err}
	}
}

func listToolsCmd(gen int, c *client.Client) tea.Cmd {
	return func() tea.Msg {
		asked := time.Now()
		ts, err := c.ListTools(context.Background())
		return toolsListedMsg{gen: gen, tools: ts, asked: asked, err: err}
	}
}

// restartCmd stops the old server (its pending requests fail with
// MCP_PROCESS_EXIT, and those events still reach the panes), closes the old
// client, and starts a new one.
func (m *Model) restartCmd(old Conn, gen int) tea.Cmd {
	start := m.opts.Start
	return func() tea.Msg {
		if old.Client != nil {
			old.Client.StopServer()
			old.Client.Close()
		}
		s, err := start()
		return startedMsg{gen: gen, sess: s, err: err}
	}
}

// closeCmd closes the client of a session that is no longer wanted (nil
// when there is none).
func closeCmd(c *client.Client) tea.Cmd {
	if c == nil {
		return nil
	}
	return func() tea.Msg {
		c.Close()
		return nil
	}
}

func cancelCmd(c *client.Client, id int64) tea.Cmd {
	return func() tea.Msg {
		c.Cancel(id, "cancelled from the sonde UI")
		return nil
	}
}

// callToolCmd calls tool name. readOnly is what the tool list the UI shows
// says of it (readOnlyHint): a call that fails after it was sent (a
// cancel, a timeout, the server's exit) of a tool that is not read-only
// may have run, and its error says so. The list the UI holds decides,
// not a tools/list made now: nobody asked for one.
func callToolCmd(c *client.Client, name string, args []byte, readOnly bool) tea.Cmd {
	return func() tea.Msg {
		call := c.GoTool(context.Background(), name, args, client.CallOptions{})
		raw, err := call.Wait()
		msg := tools.ResultMsg{Tool: name, Args: args, ID: call.ID, Raw: raw, Err: err, Latency: call.Latency()}
		if client.Uncertain(readOnly, call.ID.IsValid(), err) {
			msg.Err = fmt.Errorf("%w%s", err, client.UncertainNote)
		}
		if err == nil {
			msg.Result, msg.Err = client.ToolResult(name, raw)
		}
		return msg
	}
}
