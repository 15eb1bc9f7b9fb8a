package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// callToolTaskCmd calls a tool that may only run as a task (its
// execution.taskSupport is "required"): the task shows in the Pending pane
// until it ends, and its result opens in the Tools pane like any other.
func callToolTaskCmd(c *client.Client, name string, args []byte) tea.Cmd {
	return func() tea.Msg {
		tc := c.GoToolTask(context.Background(), name, args, client.TaskOptions{})
		res, raw, err := tc.Wait()
		return tools.ResultMsg{Tool: name, Args: args, ID: tc.CallID(), Result: res, Raw: raw, Err: err, Latency: tc.Latency()}
	}
}

// cancelTaskCmd sends tasks/cancel for a task (its row in Pending).
func cancelTaskCmd(c *client.Client, taskID string) tea.Cmd {
	return func() tea.Msg {
		_, _ = c.CancelTask(context.Background(), taskID) // the outcome shows as frames and on the task's row
		return nil
	}
}
