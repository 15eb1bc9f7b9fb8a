package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
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
	if ti.Dir == transport.In {
		line = fmt.Sprintf("%s task %s (sonde runs %s id %s for the server) %s", at, ti.Task.TaskID, ti.Method, ti.Call, ti.Task.Status)
	}
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
