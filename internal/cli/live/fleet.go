package live

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/manager"
	"github.com/sonde-mcp/sonde/mcp"
)

// fleetToolJSON is one tool of `sonde tools --all --json`.
type fleetToolJSON struct {
	Name      string   `json:"name"`
	Server    string   `json:"server"`
	Tool      mcp.Tool `json:"tool"`
	Conflicts []string `json:"conflicts,omitempty"`
}

// runToolsAll lists the tools of every chosen server, as server/tool, the
// names that several servers have flagged. A server that cannot list its
// tools is reported and the others are listed; the exit status is then
// that of the first failure's code.
func runToolsAll(cmd *cobra.Command, env *cmdutil.Env, o *ToolsOptions, args []string) error {
	o.Fleet.StartsEvery = true // each server is started to list its tools
	_, m, err := connect.OpenFleet(cmd, env, &o.Server, &o.Fleet, args, 0, "tools takes no arguments")
	if err != nil {
		return err
	}
	if o.Server.Record != "" {
		return cmdutil.Usagef("--record follows one server's session: use it with sonde call --all (which starts one server), not tools --all")
	}
	return m.Run(cmd.Context(), func(ctx context.Context) error {
		names := m.Names()
		entries, errs := m.ToolsEach(ctx, listProgress(env, o.Server.JSON, len(names)))
		var failed []string
		for _, n := range names {
			if errs[n] != nil {
				failed = append(failed, n)
			}
		}
		if o.Server.JSON {
			tools := make([]fleetToolJSON, 0, len(entries))
			for _, e := range entries {
				tools = append(tools, fleetToolJSON{Name: e.Name, Server: e.Server, Tool: e.Tool, Conflicts: e.Conflicts})
			}
			out := map[string]any{"ok": len(failed) == 0, "tools": tools, "conflicts": conflictMap(entries)}
			if held := m.NotApproved(); len(held) > 0 {
				out["not_approved"] = held
			}
			if len(failed) > 0 {
				fe := map[string]any{}
				for _, n := range failed {
					fe[n] = env.ErrorJSON(errs[n])
				}
				out["errors"] = fe
			}
			cmdutil.WriteJSON(env.Out, out)
		} else {
			tw := cmdutil.NewTable(env.Out)
			for _, e := range entries {
				desc, _, _ := strings.Cut(strings.TrimSpace(e.Tool.Description), "\n")
				mark := ""
				if len(e.Conflicts) > 0 {
					mark = "conflict: also in " + strings.Join(e.Conflicts, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, mark, desc)
			}
			tw.Flush()
			if n := len(conflictMap(entries)); n > 0 {
				fmt.Fprintf(env.Err, "sonde: %d tool %s in several servers: call them as server/tool\n", n, textfmt.Plural(n, "name is", "names are"))
			}
		}
		for _, n := range failed {
			fmt.Fprintf(env.Err, "sonde: server %s: %v\n", n, errs[n])
		}
		if len(failed) > 0 {
			return &cmdutil.ExitStatus{Code: cmdutil.CodeExit(client.CodeOf(errs[failed[0]])), Msg: fmt.Sprintf("%d of %d servers could not list their tools: %s", len(failed), len(names), strings.Join(failed, ", "))}
		}
		return nil
	})
}

// conflictMap is each tool name several servers have, with those servers.
func conflictMap(entries []manager.ToolEntry) map[string][]string {
	out := map[string][]string{}
	for _, e := range entries {
		if len(e.Conflicts) > 0 {
			out[e.Tool.Name] = append(out[e.Tool.Name], e.Server)
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// runCallAll calls server/tool among the chosen servers: only that server
// is started. A failure writes the failure report (sonde report).
func runCallAll(cmd *cobra.Command, env *cmdutil.Env, o *CallOptions, args []string) error {
	own, m, err := connect.OpenFleet(cmd, env, &o.Server, &o.Fleet, args, 1, "call takes exactly one SERVER/TOOL with several servers: sonde call SERVER/TOOL --all [--args JSON]")
	if err != nil {
		return err
	}
	if o.Task {
		return cmdutil.Usagef("--task runs one server's task: use it with one server (--server NAME once), not with several")
	}
	server, tool, err := m.Route(own[0])
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	toolArgs, err := readJSONObject(o.Args, env.In)
	if err != nil {
		return err
	}
	if err := m.Record(server); err != nil {
		return err
	}
	return m.Run(cmd.Context(), func(ctx context.Context) error {
		res, err := m.Call(ctx, server, tool, toolArgs, client.CallOptions{})
		if err != nil {
			reportFailure(env, m, err, toolArgs)
			if o.Server.JSON {
				cmdutil.WriteJSON(env.Out, map[string]any{"ok": false, "server": server, "tool": tool, "error": env.ErrorJSON(err)})
			}
			return err
		}
		if o.Server.JSON {
			cmdutil.WriteJSON(env.Out, map[string]any{"ok": !res.Result.IsError, "server": server, "tool": tool, "result": res.Raw})
		} else {
			cmdutil.PrintResult(env.Out, res.Result)
		}
		if res.Result.IsError {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: "tool " + server + "/" + tool + " returned a result with isError"}
		}
		return nil
	})
}

// reportFailure writes the failure report of a failed call where it goes
// (the state folder; beside the capture with --record), and says where on
// stderr.
func reportFailure(env *cmdutil.Env, m *connect.Fleet, err error, args json.RawMessage) {
	writeReport(env, m.Report(err, args, manager.ReportOptions{}), m.ReportPaths(), true)
}

// writeReport writes r (nil: none) to each of paths and, with say, says on
// stderr how to see it.
func writeReport(env *cmdutil.Env, r *manager.Report, paths []string, say bool) {
	if r == nil {
		return
	}
	for _, p := range paths {
		if werr := manager.WriteReport(p, r); werr != nil {
			fmt.Fprintf(env.Err, "sonde: warning: failure report not written: %v\n", werr)
		}
	}
	if say {
		fmt.Fprintln(env.Err, "sonde: failure report: sonde report")
	}
}

// callOne calls tool on one server's client. A failure is a
// *manager.CallError with the request's id and duration, for the failure
// report; for a call that was sent and ended without an answer it says
// whether its execution is uncertain (the tool is looked up in a brief
// tools/list when the session still answers: not found, it has side
// effects). Without decode, only the result's isError is read (the result
// is printed as the server wrote it).
func callOne(ctx context.Context, c *client.Client, tool string, args json.RawMessage, decode bool) (*mcp.CallToolResult, json.RawMessage, error) {
	call := c.GoTool(ctx, tool, args, client.CallOptions{})
	raw, err := call.Wait()
	if err != nil {
		sent := call.ID.IsValid()
		ce := &manager.CallError{Tool: tool, Phase: manager.PhaseCall, Duration: call.Latency(), Err: err}
		if sent {
			ce.ID = call.ID.String()
		}
		if client.Uncertain(false, sent, err) {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readOnlyLookup)
			defer cancel()
			ce.Uncertain = client.Uncertain(c.ReadOnlyTool(lctx, tool), sent, err)
		}
		return nil, raw, ce
	}
	if !decode {
		// Printed as it is (--json): only isError is read.
		isError, err := client.ToolIsError(tool, raw)
		return &mcp.CallToolResult{IsError: isError}, raw, err
	}
	res, err := client.ToolResult(tool, raw)
	return res, raw, err
}

// readOnlyLookup bounds the tools/list that tells whether a failed call's
// tool is read-only.
const readOnlyLookup = 2 * time.Second

// listProgress shows, on a terminal and without --json, how many servers
// have listed their tools, on one line redrawn in place and erased at the
// end (nil: quiet).
func listProgress(env *cmdutil.Env, asJSON bool, total int) func(string, error) {
	w := env.ErrTerminal()
	if w == nil || asJSON {
		return nil
	}
	done := 0
	fmt.Fprintf(w, "\rsonde: listing the tools of %d servers…\x1b[K", total)
	return func(string, error) {
		done++
		if done == total {
			fmt.Fprint(w, "\r\x1b[K")
			return
		}
		fmt.Fprintf(w, "\rsonde: listing the tools of %d servers… %d done\x1b[K", total, done)
	}
}
