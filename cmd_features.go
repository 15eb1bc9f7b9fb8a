package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// The headless commands of the server features: resources, read, prompts,
// prompt, complete, log-level and ping. Each connects like call (same
// flags, --json, exit statuses), makes its requests, and stops the server.

// featureCmd builds a command that takes n arguments before -- and runs op
// on a connected session. Undeclared capabilities are warned about on
// stderr before op's requests are sent.
func featureCmd(io streams, f *serverFlags, use, short, long string, n int, wrongCount string, pre func(own []string) error, op func(ctx context.Context, s *session, own []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\n" + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, argv, err := f.serverArgv(cmd, args, n, wrongCount)
			if err != nil {
				return err
			}
			if pre != nil {
				if err := pre(own); err != nil {
					return err
				}
			}
			s, err := f.connect(cmd.Context(), io, argv)
			if err != nil {
				return jsonFailure(io.out, f.json, err)
			}
			defer s.close()
			return jsonFailure(io.out, f.json, op(cmd.Context(), s, own))
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// warnUndeclared prints, on stderr, that the server did not declare the
// capability of method (the request is sent anyway).
func warnUndeclared(io streams, c *client.Client, methods ...string) {
	for _, m := range methods {
		if w := c.Undeclared(m); w != "" {
			fmt.Fprintln(io.err, "sonde: warning: "+w)
		}
	}
}

func newResourcesCmd(io streams) *cobra.Command {
	var f serverFlags
	return featureCmd(io, &f, "resources (-- COMMAND [ARG...] | --url URL)",
		"List the server's resources and resource templates (all pages)",
		`Start the server, run the handshake, list every resource (resources/list) and every
resource template (resources/templates/list), following nextCursor, and stop the server.
A server that answers templates/list with -32601 has no templates (a warning says so).
--json prints {"resources":[...],"resourceTemplates":[...]}.`,
		0, "resources takes no arguments before --", nil,
		func(ctx context.Context, s *session, _ []string) error {
			var res []mcp.Resource
			var tpls []mcp.ResourceTemplate
			err := s.retry(ctx, func(c *client.Client) (err error) {
				warnUndeclared(io, c, mcp.MethodResourcesList)
				if res, err = c.ListResources(ctx); err != nil {
					return err
				}
				tpls, err = c.ListResourceTemplates(ctx)
				var ce *client.Error
				if errors.As(err, &ce) && ce.RPC != nil && ce.RPC.Code == jsonrpc.CodeMethodNotFound {
					fmt.Fprintln(io.err, "sonde: warning: the server does not implement resources/templates/list (-32601)")
					tpls, err = nil, nil
				}
				return err
			})
			if err != nil {
				return err
			}
			if f.json {
				writeJSON(io.out, map[string]any{"resources": nonNil(res), "resourceTemplates": nonNil(tpls)})
				return nil
			}
			if len(res) == 0 && len(tpls) == 0 {
				fmt.Fprintln(io.err, "sonde: the server lists no resources and no templates")
				return nil
			}
			tw := newTable(io.out)
			for _, r := range res {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URI, r.Name, r.MimeType, firstLine(r.Description))
			}
			if len(tpls) > 0 {
				if len(res) > 0 {
					fmt.Fprintln(tw)
				}
				fmt.Fprintln(tw, "templates:")
				for _, r := range tpls {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.URITemplate, r.Name, r.MimeType, firstLine(r.Description))
				}
			}
			return tw.Flush()
		})
}

func newReadCmd(io streams) *cobra.Command {
	var f serverFlags
	var out string
	cmd := featureCmd(io, &f, "read URI [--out FILE] (-- COMMAND [ARG...] | --url URL)",
		"Read one resource and print it",
		`Start the server, run the handshake, read URI (resources/read), print it, stop the server.
Text contents are printed as is. Binary contents (blob) are summarised by URI, size and MIME
type; --out FILE writes the decoded bytes of the first content (text or blob) to FILE.
--json prints {"ok":true,"result":...} with the whole result.`,
		1, "read takes exactly one URI before --: sonde read URI -- COMMAND [ARG...]", nil,
		func(ctx context.Context, s *session, own []string) error {
			var res *mcp.ReadResourceResult
			var raw json.RawMessage
			err := s.retry(ctx, func(c *client.Client) (err error) {
				warnUndeclared(io, c, mcp.MethodResourcesRead)
				res, raw, err = c.ReadResource(ctx, own[0])
				return err
			})
			if err != nil {
				return err
			}
			var data [][]byte
			for i, rc := range res.Contents {
				b, err := contentBytes(rc)
				if err != nil {
					return &client.Error{Code: client.CodeProtocol, Message: fmt.Sprintf("resources/read %s: contents[%d].blob is not base64: %v", own[0], i, err)}
				}
				data = append(data, b)
			}
			if out != "" {
				if len(data) == 0 {
					return &client.Error{Code: client.CodeProtocol, Message: "resources/read " + own[0] + ": no contents to write to " + out}
				}
				if err := os.WriteFile(out, data[0], 0o644); err != nil {
					return &exitStatus{code: exitUsage, msg: "--out " + out + ": " + err.Error()}
				}
				if len(data) > 1 {
					fmt.Fprintf(io.err, "sonde: warning: %d contents; only the first was written to %s\n", len(data), out)
				}
			}
			if f.json {
				writeJSON(io.out, map[string]any{"ok": true, "result": raw})
				return nil
			}
			for i, rc := range res.Contents {
				switch {
				case rc.Text != nil && out == "":
					fmt.Fprint(io.out, *rc.Text)
					if !strings.HasSuffix(*rc.Text, "\n") {
						fmt.Fprintln(io.out)
					}
				default:
					fmt.Fprintln(io.out, contentSummary(rc, len(data[i])))
				}
				if i == 0 && out != "" {
					fmt.Fprintf(io.out, "written to %s\n", out)
				}
			}
			return nil
		})
	cmd.Flags().StringVar(&out, "out", "", "write the decoded bytes of the first content to `FILE`")
	return cmd
}

// contentBytes is a resource content's bytes: the text, or the decoded blob.
func contentBytes(rc mcp.ResourceContents) ([]byte, error) {
	if rc.Blob != nil {
		return base64.StdEncoding.DecodeString(*rc.Blob)
	}
	if rc.Text != nil {
		return []byte(*rc.Text), nil
	}
	return nil, nil
}

// contentSummary is one line about a resource content that is not printed.
func contentSummary(rc mcp.ResourceContents, size int) string {
	kind := "text"
	if rc.Blob != nil {
		kind = "blob"
	}
	mime := rc.MimeType
	if mime == "" {
		mime = "no MIME type"
	}
	return fmt.Sprintf("[%s %s, %d bytes, %s]", kind, rc.URI, size, mime)
}

func newPromptsCmd(io streams) *cobra.Command {
	var f serverFlags
	return featureCmd(io, &f, "prompts (-- COMMAND [ARG...] | --url URL)",
		"List the server's prompts (all pages)",
		`Start the server, run the handshake, list every prompt (prompts/list, following nextCursor)
with its arguments (required ones marked *), stop the server. --json prints the prompts as a
JSON array.`,
		0, "prompts takes no arguments before --", nil,
		func(ctx context.Context, s *session, _ []string) error {
			var ps []mcp.Prompt
			err := s.retry(ctx, func(c *client.Client) (err error) {
				warnUndeclared(io, c, mcp.MethodPromptsList)
				ps, err = c.ListPrompts(ctx)
				return err
			})
			if err != nil {
				return err
			}
			if f.json {
				writeJSON(io.out, nonNil(ps))
				return nil
			}
			if len(ps) == 0 {
				fmt.Fprintln(io.err, "sonde: the server lists no prompts")
				return nil
			}
			tw := newTable(io.out)
			for _, p := range ps {
				var args []string
				for _, a := range p.Arguments {
					if a.Required {
						args = append(args, a.Name+"*")
					} else {
						args = append(args, a.Name)
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, strings.Join(args, " "), firstLine(p.Description))
			}
			return tw.Flush()
		})
}

func newPromptCmd(io streams) *cobra.Command {
	var f serverFlags
	var argsText string
	var args map[string]string
	cmd := featureCmd(io, &f, "prompt NAME [--args JSON] (-- COMMAND [ARG...] | --url URL)",
		"Get one prompt and print its messages",
		`Start the server, run the handshake, get prompt NAME (prompts/get) with --args, print its
messages (role, then content: text as is, other blocks summarised, embedded resources as text
or by size), stop the server.

--args takes a JSON object of strings (prompt arguments are strings), @FILE, or @- for stdin.
--json prints {"ok":true,"result":...} with the whole result.`,
		1, "prompt takes exactly one NAME before --: sonde prompt NAME [--args JSON] -- COMMAND [ARG...]",
		func([]string) (err error) {
			args, err = readStringArgs(argsText, io.in)
			return err
		},
		func(ctx context.Context, s *session, own []string) error {
			var res *mcp.GetPromptResult
			var raw json.RawMessage
			err := s.retry(ctx, func(c *client.Client) (err error) {
				warnUndeclared(io, c, mcp.MethodPromptsGet)
				res, raw, err = c.GetPrompt(ctx, own[0], args)
				return err
			})
			if err != nil {
				return err
			}
			if f.json {
				writeJSON(io.out, map[string]any{"ok": true, "result": raw})
				return nil
			}
			printPrompt(io.out, res)
			return nil
		})
	cmd.Flags().StringVar(&argsText, "args", "", "prompt arguments: a JSON object of strings, @FILE, or @- for stdin")
	return cmd
}

// readStringArgs parses prompt arguments: a JSON object whose values are
// strings.
func readStringArgs(text string, stdin io.Reader) (map[string]string, error) {
	raw, err := readJSONObject(text, stdin)
	if err != nil || raw == nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, usagef(`--args: prompt arguments are strings, e.g. '{"city":"Paris"}'`)
	}
	return m, nil
}

// printPrompt prints a prompt's messages for a person.
func printPrompt(w io.Writer, r *mcp.GetPromptResult) {
	if r.Description != "" {
		fmt.Fprintln(w, r.Description)
		fmt.Fprintln(w)
	}
	for i, m := range r.Messages {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "[%s]\n", m.Role)
		c := m.Content
		switch {
		case c.Type == "resource" && c.Resource != nil && c.Resource.Text != nil:
			fmt.Fprintf(w, "[resource %s]\n%s\n", c.Resource.URI, strings.TrimRight(*c.Resource.Text, "\n"))
		case c.Type == "resource" && c.Resource != nil:
			b, _ := contentBytes(*c.Resource)
			fmt.Fprintln(w, contentSummary(*c.Resource, len(b)))
		default:
			printResult(w, &mcp.CallToolResult{Content: []mcp.Content{c.Content}})
		}
	}
}

func newCompleteCmd(io streams) *cobra.Command {
	var f serverFlags
	var prompt, tpl, arg string
	var ctxArgs []string
	var ref mcp.CompleteRef
	var argument mcp.CompleteArgument
	var ctxVals map[string]string
	cmd := featureCmd(io, &f, "complete (--prompt NAME | --resource-template URI) --arg NAME=VALUE [--context NAME=VALUE]... (-- COMMAND [ARG...] | --url URL)",
		"Ask the server to complete a prompt argument or a template variable",
		`Start the server, run the handshake, send completion/complete for argument NAME (its value so
far is VALUE) of prompt --prompt or of resource template --resource-template (the template's
uriTemplate, e.g. 'file:///{path}'), print the values one per line, stop the server.
--context gives the values of other arguments (repeatable). When the server has more values
than it sent, stderr says so. --json prints {"ok":true,"completion":{...}}.`,
		0, "complete takes no arguments before --",
		func([]string) error {
			switch {
			case (prompt == "") == (tpl == ""):
				return usagef("give exactly one of --prompt NAME and --resource-template URI")
			case prompt != "":
				ref = mcp.CompleteRef{Type: mcp.RefPrompt, Name: prompt}
			default:
				ref = mcp.CompleteRef{Type: mcp.RefResource, URI: tpl}
			}
			name, value, ok := strings.Cut(arg, "=")
			if !ok || name == "" {
				return usagef("--arg NAME=VALUE is required (VALUE may be empty: --arg city=)")
			}
			argument = mcp.CompleteArgument{Name: name, Value: value}
			for _, kv := range ctxArgs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef(fmt.Sprintf("--context %q: want NAME=VALUE", kv))
				}
				if ctxVals == nil {
					ctxVals = map[string]string{}
				}
				ctxVals[k] = v
			}
			return nil
		},
		func(ctx context.Context, s *session, _ []string) error {
			var comp *mcp.Completion
			err := s.retry(ctx, func(c *client.Client) (err error) {
				warnUndeclared(io, c, mcp.MethodComplete)
				comp, err = c.Complete(ctx, ref, argument, ctxVals)
				return err
			})
			if err != nil {
				return err
			}
			if f.json {
				writeJSON(io.out, map[string]any{"ok": true, "completion": comp})
				return nil
			}
			for _, v := range comp.Values {
				fmt.Fprintln(io.out, v)
			}
			switch {
			case comp.Total != nil && *comp.Total > len(comp.Values):
				fmt.Fprintf(io.err, "sonde: %d of %d values\n", len(comp.Values), *comp.Total)
			case comp.HasMore:
				fmt.Fprintf(io.err, "sonde: %d values; the server has more\n", len(comp.Values))
			case len(comp.Values) == 0:
				fmt.Fprintln(io.err, "sonde: no completions")
			}
			return nil
		})
	cmd.Flags().StringVar(&prompt, "prompt", "", "complete an argument of prompt `NAME`")
	cmd.Flags().StringVar(&tpl, "resource-template", "", "complete a variable of the resource template `URI` (its uriTemplate)")
	cmd.Flags().StringVar(&arg, "arg", "", "the argument to complete and its value so far, `NAME=VALUE`")
	cmd.Flags().StringArrayVar(&ctxArgs, "context", nil, "the value of another argument, `NAME=VALUE` (repeatable)")
	return cmd
}

func newLogLevelCmd(io streams) *cobra.Command {
	var f serverFlags
	var wait time.Duration
	cmd := featureCmd(io, &f, "log-level LEVEL [--wait DURATION] (-- COMMAND [ARG...] | --url URL)",
		"Set the server's log level and print the log messages that arrive",
		`Start the server, run the handshake, send logging/setLevel LEVEL (one of `+strings.Join(mcp.LogLevels, ", ")+`),
then print every notifications/message that arrives during --wait (default 0: none), one
per line as "LEVEL [LOGGER] DATA", and stop the server. --json prints each message's params
as a JSON line.`,
		1, "log-level takes exactly one LEVEL before --: sonde log-level LEVEL [--wait 5s] -- COMMAND [ARG...]",
		func(own []string) error {
			if mcp.LogLevelRank(own[0]) < 0 {
				return usagef(fmt.Sprintf("log level %q: want one of %s", own[0], strings.Join(mcp.LogLevels, ", ")))
			}
			if wait < 0 {
				return usagef("--wait must not be negative")
			}
			return nil
		},
		func(ctx context.Context, s *session, own []string) error {
			first := s.c
			sub := first.Subscribe(4096)
			defer func() { sub.Close() }()
			err := s.retry(ctx, func(c *client.Client) error {
				if c != first { // a new session after --reconnect
					sub.Close()
					sub = c.Subscribe(4096)
				}
				warnUndeclared(io, c, mcp.MethodLoggingSetLevel)
				return c.SetLogLevel(ctx, own[0])
			})
			if err != nil {
				return err
			}
			if !f.json {
				fmt.Fprintf(io.err, "sonde: log level set to %s\n", own[0])
			}
			timer := time.NewTimer(wait)
			defer timer.Stop()
			for {
				select {
				case ev, ok := <-sub.C:
					if !ok {
						return nil
					}
					printLogEvent(io.out, ev, f.json)
				case <-timer.C:
					for {
						select {
						case ev, ok := <-sub.C:
							if !ok {
								return nil
							}
							printLogEvent(io.out, ev, f.json)
						default:
							return nil
						}
					}
				case <-ctx.Done():
					return nil
				}
			}
		})
	cmd.Flags().DurationVar(&wait, "wait", 0, "how long to print the log messages that arrive after the level is set")
	return cmd
}

// printLogEvent prints ev when it is a notifications/message from the
// server.
func printLogEvent(w io.Writer, ev client.Event, asJSON bool) {
	if ev.Kind != client.EvFrame || ev.Frame.Dir != transport.In || ev.Frame.Msg.Method != mcp.MethodLogMessage {
		return
	}
	if asJSON {
		fmt.Fprintln(w, string(ev.Frame.Msg.Params))
		return
	}
	var m mcp.LogMessageParams
	if err := json.Unmarshal(ev.Frame.Msg.Params, &m); err != nil {
		fmt.Fprintf(w, "? %s\n", ev.Frame.Msg.Params)
		return
	}
	fmt.Fprintln(w, logLine(m))
}

// logLine renders a log message: "LEVEL [LOGGER] DATA", DATA as is when it
// is a string and as JSON otherwise.
func logLine(m mcp.LogMessageParams) string {
	data := string(m.Data)
	var s string
	if json.Unmarshal(m.Data, &s) == nil {
		data = s
	}
	line := m.Level
	if m.Logger != "" {
		line += " [" + m.Logger + "]"
	}
	return line + " " + data
}

func newPingCmd(io streams) *cobra.Command {
	var f serverFlags
	return featureCmd(io, &f, "ping (-- COMMAND [ARG...] | --url URL)",
		"Send ping and print how long the answer took",
		`Start the server, run the handshake, send ping, print the round trip, stop the server.
--json prints {"ok":true,"ms":N}.`,
		0, "ping takes no arguments before --", nil,
		func(ctx context.Context, s *session, _ []string) error {
			var took time.Duration
			err := s.retry(ctx, func(c *client.Client) error {
				start := time.Now()
				err := c.Ping(ctx)
				took = time.Since(start)
				return err
			})
			if err != nil {
				return err
			}
			if f.json {
				writeJSON(io.out, map[string]any{"ok": true, "ms": float64(took.Microseconds()) / 1000})
				return nil
			}
			fmt.Fprintf(io.out, "pong in %s\n", took.Round(10*time.Microsecond))
			return nil
		})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// nonNil makes an empty list print as [] in JSON.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// featureCommands are the headless commands of the server features.
func featureCommands(io streams) []*cobra.Command {
	return []*cobra.Command{
		newResourcesCmd(io), newReadCmd(io), newPromptsCmd(io), newPromptCmd(io),
		newCompleteCmd(io), newLogLevelCmd(io), newPingCmd(io),
	}
}

// taskLine renders a task event for --trace.
func taskLine(at string, ti *client.TaskInfo) string {
	line := fmt.Sprintf("%s task %s (tools/call %s id %s) %s", at, ti.Task.TaskID, ti.Tool, ti.Call, ti.Task.Status)
	if ti.Task.StatusMessage != "" {
		line += ": " + ti.Task.StatusMessage
	}
	if ti.End {
		line += " (end)"
	}
	if ti.Err != nil {
		line += ": " + ti.Err.Error()
	}
	return line
}

// table is a tabwriter whose lines lose their trailing spaces (an empty
// last column leaves none).
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

func newTable(w io.Writer) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush aligns the columns and writes the lines.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := fmt.Fprintln(t.out, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}
