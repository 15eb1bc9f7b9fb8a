package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/mcp"
)

// CallOptions are the flags of `sonde call`.
type CallOptions struct {
	Server  connect.Flags
	Multi   connect.MultiFlags
	Args    string // --args: a JSON object, @FILE or @-
	Task    bool
	TaskTTL time.Duration
}

// NewCmdCall is `sonde call TOOL`.
func NewCmdCall(env *cmdutil.Env) *cobra.Command {
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
approved. A failed call writes a failure report (sonde report; beside the capture with
--record, as FILE.report.json) that holds no argument values.

A call of a tool that is not read-only (its annotations do not say readOnlyHint: true)
that timed out, was cancelled or lost its server says "execution uncertain": it may have
run (--json: "uncertain": true).

` + cmdutil.ExitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Multi.Multi(&o.Server) {
				return runCallAll(cmd, env, &o, args)
			}
			own, t, err := connect.Resolve(cmd, &o.Server, args, 1, "call takes exactly one TOOL before --: sonde call TOOL [--args JSON] -- COMMAND [ARG...]")
			if err != nil {
				return err
			}
			return runCall(cmd.Context(), env, &o, t, own[0])
		},
	}
	o.Server.Register(cmd.Flags())
	o.Multi.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.Args, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	registerTaskFlags(cmd, &o.Task, &o.TaskTTL)
	return cmd
}

// runCall calls tool on the target's server and prints the result.
func runCall(ctx context.Context, env *cmdutil.Env, o *CallOptions, t *connect.Target, tool string) error {
	toolArgs, err := readJSONObject(o.Args, env.In)
	if err != nil {
		return err
	}
	return connect.Run(ctx, env, &o.Server, t, func(ctx context.Context, s *connect.Session) error {
		var res *mcp.CallToolResult
		var raw json.RawMessage
		err := s.Retry(ctx, func(c *client.Client) (err error) {
			if o.Task {
				res, raw, err = callTask(ctx, env, c, tool, toolArgs, o.TaskTTL)
				return err
			}
			res, raw, err = callOne(ctx, c, tool, toolArgs)
			return err
		})
		if err != nil {
			return err
		}
		if o.Server.JSON {
			cmdutil.WriteJSON(env.Out, map[string]any{"ok": !res.IsError, "result": raw})
		} else {
			cmdutil.PrintResult(env.Out, res)
		}
		if res.IsError {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: "tool " + tool + " returned a result with isError"}
		}
		return nil
	})
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
	if strings.TrimSpace(text) == "" {
		return nil, cmdutil.Usagef("--args is empty: want a JSON object, e.g. '{\"value\":\"hi\"}'")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return nil, cmdutil.Usagef("--args is not valid JSON: " + jsonWhere(text, err))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, cmdutil.Usagef(fmt.Sprintf("--args must be a JSON object, e.g. '{\"value\":\"hi\"}', not %s", jsonKind(v)))
	}
	return json.RawMessage(strings.TrimSpace(text)), nil
}

// jsonWhere says where text stops being JSON: the decoder's reason, the
// line and column, then that line (a window of it around the column) and
// a caret under the column.
func jsonWhere(text string, err error) string {
	var se *json.SyntaxError
	off := len(text)
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	reason := strings.TrimPrefix(err.Error(), "json: ")
	if err.Error() == "unexpected end of JSON input" {
		reason = "it ends too soon (a missing } or ])"
	}
	off = min(max(off, 0), len(text))
	// The decoder's offset is just past the byte it stumbled on.
	at := max(off-1, 0)
	line := strings.Count(text[:at], "\n") + 1
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := strings.IndexByte(text[at:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += at
	}
	col := utf8.RuneCountInString(text[start:at]) + 1
	src := []rune(strings.TrimRight(text[start:end], "\r"))
	from, to := max(col-1-40, 0), min(col-1+40, len(src))
	shown := string(src[from:to])
	if from > 0 {
		shown = "…" + shown
	}
	if to < len(src) {
		shown += "…"
	}
	pad := col - 1 - from
	if from > 0 {
		pad++
	}
	return fmt.Sprintf("%s (line %d, column %d)\n  %s\n  %s^", reason, line, col, shown, strings.Repeat(" ", pad))
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "something else"
}
