package interactive

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/lesson"
)

// DemoOptions are the flags of `sonde demo`.
type DemoOptions struct {
	UI   UIOptions
	Slow time.Duration // the slow call's delay (0: the default)
	Text bool          // the narrated walk-through instead of the UI
}

// NewCmdDemo is `sonde demo`: the out-of-order lesson.
func NewCmdDemo(env *cmdutil.Env) *cobra.Command {
	var o DemoOptions
	f := &o.UI.Server
	cmd := &cobra.Command{
		Use:   "demo [-- COMMAND [ARG...]]",
		Short: "The out-of-order lesson, step by step, in the interactive UI",
		Long: `A guided lesson on how an MCP client matches responses to requests: by id, never by
order. sonde starts its own fixture server (or the COMMAND after --, which must offer the
fixture's echo and crash tools) and, one step per space key, sends a slow and a fast
call (the fast answer arrives first and settles its own id), runs the same server behind
sonde tap with a reorder fault rule (three answers handed over last first: matched by
order, two go wrong; not over --url), lets a call time out and
shows its late answer matched to nothing, cancels a call, compares a legacy server
request (elicitation/create) with a modern input_required result answered by a retry
under a new id (a second fixture, started with --era modern), and crashes the server
with requests in flight. o shows what a client matching answers in FIFO order would have
done. After the lesson the session is yours.

--text prints a short narrated version of the first step instead (no terminal UI), then
names the lesson's other steps.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Config != "" || f.Server != "" || len(f.Inputs) > 0 {
				return cmdutil.Usagef("demo runs its own fixture server: --config, --server and --input do not apply")
			}
			argv := args
			if cmd.ArgsLenAtDash() < 0 {
				if len(args) > 0 {
					return cmdutil.Usagef("demo takes no arguments (a server command goes after --)")
				}
				self, err := os.Executable()
				if err != nil {
					return cmdutil.Usagef("cannot find sonde's own executable: " + err.Error())
				}
				argv = []string{self, "fixture"}
			} else if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return cmdutil.Usagef("demo: put the server command after --")
			}
			if o.Text {
				slow := o.Slow
				if slow <= 0 {
					slow = 600 * time.Millisecond
				}
				return runDemo(cmd.Context(), env, f, f.Target(argv), slow)
			}
			return runTUI(cmd.Context(), env, &o.UI, f.Target(argv), &lesson.Options{Slow: o.Slow})
		},
	}
	o.UI.Register(cmd)
	_ = cmd.Flags().MarkHidden("config")
	_ = cmd.Flags().MarkHidden("server")
	cmd.Flags().BoolVar(&o.Text, "text", false, "print a narrated walk-through instead of the interactive lesson")
	cmd.Flags().DurationVar(&o.Slow, "slow", 0, "delay of the slow call (default 3s in the lesson, 600ms with --text)")
	return cmd
}

// runDemo is demo --text: the first step of the lesson, narrated.
func runDemo(ctx context.Context, env *cmdutil.Env, f *connect.Flags, t *connect.Target, slow time.Duration) error {
	w := env.Out
	fmt.Fprintln(w, "sonde demo: responses are matched by id, never by order")
	fmt.Fprintln(w)
	s, err := connect.Open(ctx, env, f, t)
	if err != nil {
		return err
	}
	defer s.Close()
	sub := s.Client.Subscribe(1024)
	narrated := make(chan struct{})
	go func() {
		defer close(narrated)
		narrate(w, sub)
	}()
	fmt.Fprintf(w, "The handshake is done (initialize, then notifications/initialized). sonde now sends\n")
	fmt.Fprintf(w, "two calls to the echo tool, one after the other, without waiting for answers:\n\n")

	call := func(value string, delay time.Duration) *client.Call {
		args, _ := json.Marshal(map[string]any{"value": value, "delay_ms": delay.Milliseconds()})
		return s.Client.GoTool(ctx, "echo", args, client.CallOptions{})
	}
	slowCall := call("slow", slow)
	time.Sleep(20 * time.Millisecond) // let the first line print first
	fastCall := call("fast", 0)
	for _, c := range []*client.Call{fastCall, slowCall} {
		if _, err := c.Wait(); err != nil {
			sub.Close()
			<-narrated
			return err
		}
	}
	time.Sleep(20 * time.Millisecond)
	sub.Close()
	<-narrated
	fmt.Fprintf(w, `
The server answered id %[2]s first. A client that matched answers by order (the first
answer goes to the first request) would have handed "fast" to the slow call and left
the other waiting, or swapped the two results. sonde instead registers every request
in its pending map under its id before writing it, and settles exactly the entry whose
id the response carries:

  pending map after sending:  { %[1]s: echo "slow",  %[2]s: echo "fast" }
  <- response id %[2]s          settles %[2]s, leaves %[1]s waiting
  <- response id %[1]s          settles %[1]s; the map is empty again

Ids are never reused, so an answer that arrives after its request timed out or was
cancelled is reported as late instead of being matched to something else. Ids also
keep their JSON type: "3" (a string) is not 3.

Try it on a misbehaving server:
  sonde call echo --args '{"value":"hi"}' --trace -- sonde fixture --fault stdout-noise
`, slowCall.ID, fastCall.ID)
	titles := lesson.Titles()
	fmt.Fprintf(w, "\nThat was step 1 of the lesson's %d. The interactive lesson (sonde demo, no --text) goes on:\n", len(titles))
	for i, title := range titles[1:] {
		fmt.Fprintf(w, "  %2d. %s\n", i+2, title)
	}
	return nil
}

// narrate prints the frames of the lesson as they cross the wire.
func narrate(w io.Writer, sub *client.Subscription) {
	var t0 time.Time
	for ev := range sub.C {
		if ev.Kind != client.EvFrame {
			continue
		}
		f := ev.Frame
		if t0.IsZero() {
			t0 = ev.Time
		}
		at := fmt.Sprintf("%8s", "+"+textfmt.Dur(ev.Time.Sub(t0)))
		switch {
		case f.Dir == client.Out && f.Msg.Method == mcp.MethodToolsCall:
			var p struct {
				Arguments json.RawMessage `json:"arguments"`
			}
			m := decodeParams(f.Raw, &p)
			fmt.Fprintf(w, "  %s  -> request  id %-3s tools/call echo %s\n", at, m, p.Arguments)
		case f.Dir == client.In && (f.Verdict == client.VerdictResolved || f.Verdict == client.VerdictRemoteError):
			fmt.Fprintf(w, "  %s  <- response id %-3s %s  (%s)\n", at, f.Msg.ID, resultText(f.Msg.Result), f.Detail)
		case f.Dir == client.In && f.Verdict != client.VerdictNotification && f.Verdict != client.VerdictProgress:
			fmt.Fprintf(w, "  %s  <- %s: %s\n", at, f.Verdict, f.Detail)
		}
	}
}

func decodeParams(raw []byte, into any) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(raw, &m)
	_ = json.Unmarshal(m.Params, into)
	return string(m.ID)
}

func resultText(raw json.RawMessage) string {
	var r mcp.CallToolResult
	if json.Unmarshal(raw, &r) != nil || len(r.Content) == 0 {
		return string(raw)
	}
	return fmt.Sprintf("%q", strings.TrimSpace(r.Content[0].Text))
}
