package live

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/manager"
	"github.com/sonde-mcp/sonde/mcp"
)

// CallOptions are the flags of `sonde call`.
type CallOptions struct {
	Server  connect.Flags
	Fleet   connect.FleetFlags
	Args    string // --args: a JSON object, @FILE or @-
	Task    bool
	TaskTTL time.Duration
	// Policies is --policies: client timeout policies the call is
	// evaluated under (docs/timeouts.md), printed on stderr.
	Policies []string
	// Breaks are --break, --breaks and --break-timeout (docs/breakpoints.md).
	Breaks connect.BreakFlags
}

// NewCmdCall is `sonde call TOOL`; serve gives its breakpoints their
// socket (internal/cli/tap.ServeEngine).
func NewCmdCall(env *cmdutil.Env, serve connect.BreakServer) *cobra.Command {
	var o CallOptions
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON] [--task] (-- COMMAND [ARG...] | --url URL) | call SERVER/TOOL (--all | --server NAME...)",
		Short: "Call one tool and print its result",
		Long: `Start the server, run the handshake, call TOOL once, print the result, stop the server.

Text content is printed as is; other content blocks are summarised; structuredContent is
printed as JSON when there is no text. --json prints the whole result object.
A result with isError is printed too, and the exit status is 1.

--args takes a JSON object, @FILE to read it from a file, or @- for stdin.

--task runs the call as a task (2025-11-25, params.task): sonde polls tasks/get at the
server's pollInterval, prints each status change on stderr, then fetches tasks/result;
Ctrl-C sends tasks/cancel. --task-ttl asks the server to keep the task that long.

With several servers (--all, or --server NAME more than once), TOOL is SERVER/TOOL: only
that server is started (the others never run). Restarts follow the manager's policy
(--max-failures): a server that keeps failing is quarantined (MCP_QUARANTINED) until
approved.

A failed call (one server or several) writes a failure report (sonde report; beside the
capture with --record, as FILE.report.json) that holds no argument values; with several
servers stderr says so.

A call of a tool that is not read-only (its annotations do not say readOnlyHint: true)
that timed out, was cancelled or lost its server says "execution uncertain": it may have
run (--json: "uncertain": true).

--policies P (repeatable: a preset such as ts-sdk or inspector, or
timeout=D[,reset-on-progress][,max-total=D]) also says on stderr, for each policy, whether
the call would have passed under it and by how much, as sonde timeouts does a capture.

--break Q (repeatable, a filter query as 'dir:in kind:response'), --breaks FILE: hold the
frames that match; while held, sonde breaks (release, edit, drop, answer; --session call)
acts on them from another shell, and each goes on unchanged after --break-timeout (default
20s; 0: held until sonde breaks acts). Held time does not count against --timeout.

` + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Fleet.Fleet(&o.Server) {
				if o.Breaks.Given() {
					return cmdutil.Usagef("--break and --breaks hold one server's frames: use them with one server, not --all or several --server")
				}
				return runCallAll(cmd, env, &o, args)
			}
			own, t, err := connect.Resolve(cmd, &o.Server, args, 1, "call takes exactly one TOOL before --: sonde call TOOL [--args JSON] -- COMMAND [ARG...]")
			if err != nil {
				return err
			}
			held, err := o.Breaks.Headless(env, serve, "call")
			if err != nil {
				return err
			}
			defer held.Close()
			return runCall(cmd.Context(), env, &o, t, own[0], held)
		},
	}
	o.Server.Register(cmd.Flags())
	o.Fleet.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.Args, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	registerTaskFlags(cmd, &o.Task, &o.TaskTTL)
	o.Breaks.Register(cmd.Flags())
	cmd.Flags().StringArrayVar(&o.Policies, "policies", nil, "say on stderr how the call fares under client timeout `POLICY` (a preset or timeout=D[,reset-on-progress][,max-total=D]; repeatable)")
	return cmd
}

// runCall calls tool on the target's server and prints the result, its
// frames offered to held's breakpoints (none when nil).
func runCall(ctx context.Context, env *cmdutil.Env, o *CallOptions, t *connect.Target, tool string, held *connect.Held) error {
	toolArgs, err := readJSONObject(o.Args, env.In)
	if err != nil {
		return err
	}
	policies, err := parsePolicies(o.Policies)
	if err != nil {
		return err
	}
	started := false
	err = connect.RunHeld(ctx, env, &o.Server, t, held, func(ctx context.Context, s *connect.Session) error {
		started = true
		if len(policies) > 0 {
			watch := watchPolicies(s.Client, policies, 1)
			defer func() { watch.writeVerdicts(env.Err) }()
		}
		var res *mcp.CallToolResult
		var raw json.RawMessage
		err := s.Retry(ctx, func(c *client.Client) (err error) {
			if o.Task {
				res, raw, err = callTask(ctx, env, c, tool, toolArgs, o.TaskTTL)
				return err
			}
			res, raw, err = callOne(ctx, c, tool, toolArgs, !o.Server.JSON)
			return err
		})
		if err != nil {
			reportOne(ctx, env, o, t, s.Client, tool, err, toolArgs)
			return err
		}
		if o.Server.JSON {
			cmdutil.WriteResultJSON(env.Out, !res.IsError, raw)
		} else {
			cmdutil.PrintResult(env.Out, res)
		}
		if res.IsError {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: "tool " + tool + " returned a result with isError"}
		}
		return nil
	})
	if err != nil && !started {
		reportOne(ctx, env, o, t, nil, tool, err, toolArgs)
	}
	return err
}

// reportOne writes the failure report of a call on one server (sonde
// call TOOL -- CMD) where the reports of calls over several servers go
// (sonde report; beside the capture with --record), quietly: the error
// printed is the one line it always was. c is nil when the server did not
// start. An error without a stable code (a usage error) writes none.
func reportOne(ctx context.Context, env *cmdutil.Env, o *CallOptions, t *connect.Target, c *client.Client, tool string, err error, args json.RawMessage) {
	if client.CodeOf(err) == "" {
		return
	}
	name := o.Server.Server
	switch {
	case name != "":
	case t.URL != "":
		name = t.URL
		if u, err := url.Parse(t.URL); err == nil {
			name = u.Redacted() // a report holds no password
		}
	case len(t.Argv) > 0:
		name = filepath.Base(t.Argv[0])
	}
	ce := manager.CallError{Tool: tool, Phase: manager.PhaseCall, Err: err}
	if found := (*manager.CallError)(nil); errors.As(err, &found) {
		ce = *found // a copy: the error returned is left as it is
	} else if c == nil {
		ce.Phase = manager.PhaseStart
	}
	ce.Server = name
	f := manager.Failure{Hash: manager.Hash(manager.Spec{Name: name, Argv: t.Argv, URL: t.URL, Env: t.Env, Cwd: t.Cwd}), Where: "command line", Hide: t.Hide}
	if o.Server.Server != "" {
		f.Where = "--server " + o.Server.Server
	}
	if c != nil {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readOnlyLookup)
		f.Init, _ = c.Initialize(lctx) // the handshake's, kept: no exchange
		cancel()
	}
	writeReport(env, manager.BuildReport(&ce, f, args, manager.ReportOptions{}), connect.ReportPaths(&o.Server), false)
}

// readJSONObject parses --args: "" (none), a JSON object, @FILE or @-.
func readJSONObject(text string, stdin io.Reader) (json.RawMessage, error) {
	if text == "" {
		return nil, nil
	}
	if strings.HasPrefix(text, "@") {
		var b []byte
		var err error
		if text == "@-" {
			b, err = io.ReadAll(io.LimitReader(stdin, 64<<20))
		} else {
			b, err = os.ReadFile(text[1:])
		}
		if err != nil {
			return nil, cmdutil.Usagef("--args " + text + ": " + err.Error())
		}
		text = string(b)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, cmdutil.Usagef(argsError(text, err))
	}
	return json.RawMessage(strings.TrimSpace(text)), nil
}
