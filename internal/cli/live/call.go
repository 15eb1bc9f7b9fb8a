package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

func newCallCmd(io streams) *cobra.Command {
	var f serverFlags
	var argsText string
	var task bool
	var taskTTL time.Duration
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON] [--task] (-- COMMAND [ARG...] | --url URL)",
		Short: "Call one tool and print its result",
		Long: `Start the server, run the handshake, call TOOL once, print the result, stop the server.

Text content is printed as is; other content blocks are summarised; structuredContent is
printed as JSON when there is no text. --json prints the whole result object.
A result with isError is printed too, and the exit status is 1.

--args takes a JSON object, @FILE to read it from a file, or @- for stdin.

--task runs the call as a task (2025-11-25, params.task): sonde polls tasks/get at the
server's pollInterval, prints each status change on stderr, then fetches tasks/result;
Ctrl-C sends tasks/cancel. --task-ttl asks the server to keep the task that long.

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, argv, err := f.serverArgv(cmd, args, 1, "call takes exactly one TOOL before --: sonde call TOOL [--args JSON] -- COMMAND [ARG...]")
			if err != nil {
				return err
			}
			toolArgs, err := readJSONObject(argsText, io.in)
			if err != nil {
				return err
			}
			s, err := f.connect(cmd.Context(), io, argv)
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			defer s.close()
			var res *mcp.CallToolResult
			var raw json.RawMessage
			err = s.retry(cmd.Context(), func(c *client.Client) (err error) {
				if task {
					res, raw, err = callTask(cmd.Context(), io, c, own[0], toolArgs, taskTTL)
					return err
				}
				res, raw, err = c.CallTool(cmd.Context(), own[0], toolArgs, client.CallOptions{})
				return err
			})
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			if f.json {
				writeJSON(io.out, map[string]any{"ok": !res.IsError, "result": raw})
			} else {
				printResult(io.out, res)
			}
			if res.IsError {
				return &exitStatus{code: exitToolError, msg: "tool " + own[0] + " returned a result with isError"}
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&argsText, "args", "", "tool arguments: a JSON object, @FILE, or @- for stdin")
	registerTaskFlags(cmd, &task, &taskTTL)
	return cmd
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
			return nil, usagef("--args " + text + ": " + err.Error())
		}
		text = string(b)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		return nil, usagef("--args must be a JSON object, e.g. '{\"value\":\"hi\"}'")
	}
	return json.RawMessage(strings.TrimSpace(text)), nil
}

// printResult prints a tool result for a person.
func printResult(w io.Writer, r *mcp.CallToolResult) {
	texts := 0
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			texts++
			fmt.Fprintln(w, c.Text)
		case "image", "audio":
			fmt.Fprintf(w, "[%s %s, %d bytes base64]\n", c.Type, c.MimeType, len(c.Data))
		case "resource_link":
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		default:
			fmt.Fprintf(w, "[%s content]\n", c.Type)
		}
	}
	if texts == 0 && len(r.StructuredContent) > 0 {
		fmt.Fprintln(w, indentJSON(r.StructuredContent))
	}
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintln(w, string(b))
}

// errorJSON is the error object of --json output.
func errorJSON(err error) map[string]any {
	e := map[string]any{"code": string(client.CodeOf(err)), "message": err.Error()}
	var ce *client.Error
	if errors.As(err, &ce) {
		e["message"] = ce.Message
		if ce.RPC != nil {
			e["rpc_code"] = ce.RPC.Code
			if len(ce.RPC.Data) > 0 {
				e["data"] = ce.RPC.Data
			}
		}
		if els := elicitationsJSON(err); els != nil {
			e["elicitations"] = els
		}
		if a := client.Authorization(err); a != nil {
			e["auth"] = a // what discovery found after a 401 (transport.AuthDiscovery)
		}
	}
	return e
}

// jsonFailure also reports err on stdout when --json is set, so a script
// reading stdout sees the failure; the error is returned for stderr and the
// exit status.
func jsonFailure(w io.Writer, asJSON bool, err error) error {
	if asJSON && client.CodeOf(err) != "" {
		writeJSON(w, map[string]any{"ok": false, "error": errorJSON(err)})
	}
	return err
}
