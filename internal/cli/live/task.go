package live

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/mcp"
)

// registerTaskFlags adds call's --task and --task-ttl.
func registerTaskFlags(cmd *cobra.Command, task *bool, ttl *time.Duration) {
	cmd.Flags().BoolVar(task, "task", false, "run the call as a task (params.task): poll tasks/get, then tasks/result")
	cmd.Flags().DurationVar(ttl, "task-ttl", 0, "with --task: how long the server should keep the task (params.task.ttl; default: the server's choice)")
}

// callTask runs a task-augmented tools/call, printing each status change
// of the task on stderr.
func callTask(ctx context.Context, env *cmdutil.Env, c *client.Client, name string, args json.RawMessage, ttl time.Duration) (*mcp.CallToolResult, json.RawMessage, error) {
	warnUndeclared(env, c, mcp.MethodTasksGet)
	sub := c.Subscribe(256)
	defer sub.Close()
	tc := c.GoToolTask(ctx, name, args, client.TaskOptions{TTL: ttl})
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return tc.Wait()
			}
			if ev.Kind == client.EvTask && ev.Task.Dir != client.In && ev.Task.Call == tc.CallID() && !ev.Task.End {
				line := "sonde: task " + ev.Task.Task.TaskID + " " + ev.Task.Task.Status
				if m := ev.Task.Task.StatusMessage; m != "" {
					line += ": " + m
				}
				fmt.Fprintln(env.Err, line)
			}
		case <-tc.Done():
			return tc.Wait()
		}
	}
}
