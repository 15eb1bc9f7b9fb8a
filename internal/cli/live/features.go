package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/mcp"
)

// The headless commands of the server features: resources, read, prompts,
// prompt, complete, log-level and ping. Each connects like call (same
// flags, --json, exit statuses), makes its requests, and stops the server.

// featureCmd builds a command that takes n arguments before -- and runs op
// on a connected session. Undeclared capabilities are warned about on
// stderr before op's requests are sent.
func featureCmd(env *cmdutil.Env, f *connect.Flags, use, short, long string, n int, wrongCount string, pre func(own []string) error, op func(ctx context.Context, s *connect.Session, own []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\n" + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, t, err := connect.Resolve(cmd, f, args, n, wrongCount)
			if err != nil {
				return err
			}
			if pre != nil {
				if err := pre(own); err != nil {
					return err
				}
			}
			return connect.Run(cmd.Context(), env, f, t, func(ctx context.Context, s *connect.Session) error {
				return op(ctx, s, own)
			})
		},
	}
	f.Register(cmd.Flags())
	return cmd
}

// warnUndeclared prints, on stderr, that the server did not declare the
// capability of method (the request is sent anyway).
func warnUndeclared(env *cmdutil.Env, c *client.Client, methods ...string) {
	for _, m := range methods {
		if w := c.Undeclared(m); w != "" {
			fmt.Fprintln(env.Err, "sonde: warning: "+w)
		}
	}
}

// LogLevelOptions are the flags of `sonde log-level`.
type LogLevelOptions struct {
	Server connect.Flags
	Wait   time.Duration
}

// NewCmdLogLevel is `sonde log-level LEVEL`.
func NewCmdLogLevel(env *cmdutil.Env) *cobra.Command {
	var o LogLevelOptions
	cmd := featureCmd(env, &o.Server, "log-level LEVEL [--wait DURATION] (-- COMMAND [ARG...] | --url URL)",
		"Set the server's log level and print the log messages that arrive",
		`Start the server, run the handshake, send logging/setLevel LEVEL (one of `+strings.Join(mcp.LogLevels, ", ")+`),
then print every notifications/message that arrives during --wait (default 0: none), one
per line as "LEVEL [LOGGER] DATA", and stop the server. --json prints each message's params
as a JSON line.`,
		1, "log-level takes exactly one LEVEL before --: sonde log-level LEVEL [--wait 5s] -- COMMAND [ARG...]",
		func(own []string) error {
			if mcp.LogLevelRank(own[0]) < 0 {
				return cmdutil.Usagef(fmt.Sprintf("log level %q: want one of %s", own[0], strings.Join(mcp.LogLevels, ", ")))
			}
			if o.Wait < 0 {
				return cmdutil.Usagef("--wait must not be negative")
			}
			return nil
		},
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runLogLevel(ctx, env, &o, s, own)
		})
	cmd.Flags().DurationVar(&o.Wait, "wait", 0, "how long to print the log messages that arrive after the level is set")
	return cmd
}

// runLogLevel runs `sonde log-level` on the session.
func runLogLevel(ctx context.Context, env *cmdutil.Env, o *LogLevelOptions, s *connect.Session, own []string) error {
	first := s.Client
	sub := first.Subscribe(4096)
	defer func() { sub.Close() }()
	err := s.Retry(ctx, func(c *client.Client) error {
		if c != first { // a new session after --reconnect
			sub.Close()
			sub = c.Subscribe(4096)
		}
		warnUndeclared(env, c, mcp.MethodLoggingSetLevel)
		return c.SetLogLevel(ctx, own[0])
	})
	if err != nil {
		return err
	}
	if !o.Server.JSON {
		fmt.Fprintf(env.Err, "sonde: log level set to %s\n", own[0])
	}
	timer := time.NewTimer(o.Wait)
	defer timer.Stop()
	waited := false // once the wait is over, what already came is printed, then no more
	for {
		var ev client.Event
		ok := true
		if waited {
			select {
			case ev, ok = <-sub.C:
			default:
				return nil
			}
		} else {
			select {
			case ev, ok = <-sub.C:
			case <-timer.C:
				waited = true
				continue
			case <-ctx.Done():
				return nil
			}
		}
		if !ok {
			return nil
		}
		printLogEvent(env.Out, ev, o.Server.JSON)
	}
}

// printLogEvent prints ev when it is a notifications/message from the
// server.
func printLogEvent(w io.Writer, ev client.Event, asJSON bool) {
	if ev.Kind != client.EvFrame || ev.Frame.Dir != client.In || ev.Frame.Msg.Method != mcp.MethodLogMessage {
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

// PingOptions are the flags of `sonde ping`.
type PingOptions struct {
	Server connect.Flags
}

// NewCmdPing is `sonde ping`.
func NewCmdPing(env *cmdutil.Env) *cobra.Command {
	var o PingOptions
	return featureCmd(env, &o.Server, "ping (-- COMMAND [ARG...] | --url URL)",
		"Send ping and print how long the answer took",
		`Start the server, run the handshake, send ping, print the round trip, stop the server.
--json prints {"ok":true,"ms":N}.`,
		0, "ping takes no arguments before --", nil,
		func(ctx context.Context, s *connect.Session, own []string) error {
			return runPing(ctx, env, &o, s, own)
		})
}

// runPing runs `sonde ping` on the session.
func runPing(ctx context.Context, env *cmdutil.Env, o *PingOptions, s *connect.Session, _ []string) error {
	var took time.Duration
	err := s.Retry(ctx, func(c *client.Client) error {
		start := time.Now()
		err := c.Ping(ctx)
		took = time.Since(start)
		return err
	})
	if err != nil {
		return err
	}
	if o.Server.JSON {
		cmdutil.WriteJSON(env.Out, map[string]any{"ok": true, "ms": float64(took.Microseconds()) / 1000})
		return nil
	}
	fmt.Fprintf(env.Out, "pong in %s\n", took.Round(10*time.Microsecond))
	return nil
}

// NewCmdFeatures are the headless commands of the server features.
func NewCmdFeatures(env *cmdutil.Env) []*cobra.Command {
	return []*cobra.Command{
		NewCmdResources(env), NewCmdRead(env), NewCmdPrompts(env), NewCmdPrompt(env),
		NewCmdComplete(env), NewCmdLogLevel(env), NewCmdPing(env),
	}
}
