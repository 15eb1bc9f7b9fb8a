package live

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/gate"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// checkStep is one line of the health report.
type checkStep struct {
	Name   string  `json:"step"`
	OK     bool    `json:"ok"`
	MS     float64 `json:"ms"`
	Detail string  `json:"detail"`
	Error  any     `json:"error,omitempty"`
	// Why says what sonde saw when the server could not be started or
	// did not answer initialize.
	Why string `json:"why,omitempty"`
}

// CheckOptions are the flags of `sonde check`.
type CheckOptions struct {
	Server    connect.Flags
	Gate      cmdutil.GateFlags
	Contracts gate.Contracts
	// Calls are the --call tools (NAME or NAME=ARGS) called after ping.
	Calls []string
}

// NewCmdCheck is `sonde check`.
func NewCmdCheck(env *cmdutil.Env) *cobra.Command {
	var o CheckOptions
	cmd := &cobra.Command{
		Use:   "check (-- COMMAND [ARG...] | --url URL)",
		Short: "Health report: handshake, tools/list and ping, with timings",
		Long: `Start the server and check that it speaks MCP: initialize (and its protocol version),
tools/list over all pages, ping; then report what went wrong on the wire on the way
(lines on stdout that are not JSON-RPC, responses for unknown or retired ids) and how
much the server wrote on stderr. Nothing with side effects is called. Over HTTP, when the
server refuses sonde with 401 (or 403 insufficient_scope), an auth line says what
authorization discovery found: the resource, its authorization server (S256, dynamic
registration), the scopes, and what went wrong on the way. With --oauth, an "auth grant"
line says which grant sonde ran (authorization code, client credentials, cross-app
access), with which client and why.

When the server cannot be started or does not answer initialize, a "why" line says what
sonde saw: how it exited, what it wrote on stdout and stderr.

Contracts (each fails the run, exit status 1, when broken):
  --expect-tool NAME        the tool must be listed (repeatable)
  --forbid-tool NAME        the tool must not be listed (repeatable)
  --expect-tools-count N    exactly N tools must be listed
  --max-duration D          every request of the check (initialize, each tools/list page,
                            ping) must end within D
  --max-server-duration D   every request's server time must be within D: an MRTR chain
                            (input_required, then retries) counts its rounds summed,
                            not the time the client or its user took between them

--call NAME[=ARGS] (repeatable) also calls a tool (ARGS a JSON object), a step each; its
input requests are answered from --elicit-reply, --sampling-reply and --root as in call.

The session is also linted, and its requests' outcomes kept.
` + cmdutil.FailOnHelp + `
check's default --fail-on is none: only failing steps and broken contracts fail. The
lines in a SARIF log are those of the --record capture, when there is one.

  sonde check --expect-tool search --forbid-tool shell --fail-on must,drift -- ./server
  sonde check --format junit --fail-on all --record s.jsonl -- ./server > check.xml

The exit status is the one of the first failing step; else 1 when a contract is broken or
a result named by --fail-on was found; 0 when all pass.

` + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, t, err := connect.Resolve(cmd, &o.Server, args, 0, "check takes no arguments before --")
			if err != nil {
				return err
			}
			return runCheck(cmd.Context(), env, &o, t)
		},
	}
	o.Server.Register(cmd.Flags())
	o.Gate.Register(cmd.Flags(), "none")
	cmd.Flags().StringArrayVar(&o.Contracts.ExpectTools, "expect-tool", nil, "fail unless the server lists tool NAME (repeatable)")
	cmd.Flags().StringArrayVar(&o.Contracts.ForbidTools, "forbid-tool", nil, "fail if the server lists tool NAME (repeatable)")
	cmd.Flags().DurationVar(&o.Contracts.MaxDuration, "max-duration", 0, "fail if a request takes longer than D")
	cmd.Flags().DurationVar(&o.Contracts.MaxServerDuration, "max-server-duration", 0, "fail if a call's server time (an MRTR chain's rounds, without the client's waits) is over D")
	cmd.Flags().StringArrayVar(&o.Calls, "call", nil, "also call tool `NAME[=ARGS]` (ARGS: a JSON object; repeatable): a step each")
	cmd.Flags().IntVar(&o.Contracts.ToolsCount, "expect-tools-count", -1, "fail unless the server lists exactly N tools")
	return cmd
}

// runCheck runs the steps of the health report and prints it.
func runCheck(ctx context.Context, env *cmdutil.Env, o *CheckOptions, t *connect.Target) error {
	f := &o.Server
	failOn, err := o.Gate.Parse(f.JSON)
	if err != nil {
		return err
	}
	calls, err := checkArgs(o)
	if err != nil {
		return err
	}
	var steps []checkStep
	var firstErr error
	var auth *oauth.Discovery
	step := func(name string, start time.Time, detail string, err error) bool {
		st := checkStep{Name: name, OK: err == nil, MS: ms(time.Since(start)), Detail: detail}
		if err != nil {
			if name != "start+initialize" {
				st.Detail = err.Error() // not "0 tools" or "{}" as if it had answered
			}
			st.Error = env.ErrorJSON(err)
			if firstErr == nil {
				firstErr = err
			}
			if auth == nil {
				auth = client.Authorization(err)
			}
		}
		steps = append(steps, st)
		return err == nil
	}

	target := strings.Join(t.Argv, " ")
	if t.URL != "" {
		target = t.URL
	}
	w := newCheckWatch(target, t.URL == "", failOn, &o.Contracts)
	t0 := time.Now()
	s, err := connect.OpenFollowing(ctx, env, f, t, w.follow)
	if !step("start+initialize", t0, target, err) {
		w.wait()
		steps[0].Why = w.why(err)
		rep, err := w.report(env, o, steps, nil, false)
		if err != nil {
			return err
		}
		return reportCheck(env, o, steps, nil, auth, env.AuthGrant(), firstErr, rep)
	}
	steps[0].Detail = initDetail(s)
	modern := s.Client.Era() == client.EraModern
	if modern {
		steps[0].Name = "start+discover"
	}

	t1 := time.Now()
	tools, err := s.Client.ListTools(ctx)
	step("tools/list", t1, fmt.Sprintf("%d tools", len(tools)), err)
	listed := err == nil

	if !modern { // the modern era has no ping
		t2 := time.Now()
		err = s.Client.Ping(ctx)
		step("ping", t2, "{}", err)
	}
	checkCalls(ctx, s.Client, calls, step)

	st := s.Client.Stats()
	wire := fmt.Sprintf("%d frames sent; %d malformed, %d invalid, %d unknown, %d late, %d duplicate; %s on stderr",
		st.Sent, st.Malformed, st.Invalid, st.Unknown, st.Late, st.Duplicate, textfmt.Size(int(st.StderrBytes)))
	s.Close()
	w.wait()
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	rep, err := w.report(env, o, steps, names, listed)
	if err != nil {
		return err
	}
	return reportCheck(env, o, steps, &wire, auth, env.AuthGrant(), firstErr, rep)
}

// checkCalls calls the --call tools, a step each.
func checkCalls(ctx context.Context, c *client.Client, calls []checkCall, step func(string, time.Time, string, error) bool) {
	for _, call := range calls {
		t0 := time.Now()
		res, _, err := c.CallTool(ctx, call.name, call.args, client.CallOptions{})
		detail := "result"
		if res != nil && res.IsError {
			detail = "result with isError"
		}
		step("call "+call.name, t0, detail, err)
	}
}

// checkCall is one --call: a tool and its arguments.
type checkCall struct {
	name string
	args json.RawMessage
}

// checkArgs checks the contracts' durations and reads the --call values.
func checkArgs(o *CheckOptions) ([]checkCall, error) {
	if o.Contracts.MaxDuration < 0 || o.Contracts.MaxServerDuration < 0 {
		return nil, cmdutil.Usagef("--max-duration and --max-server-duration must not be negative")
	}
	return parseCalls(o.Calls)
}

// parseCalls reads the --call values: NAME or NAME=ARGS, ARGS a JSON
// object (tool names have no "=").
func parseCalls(vals []string) ([]checkCall, error) {
	var out []checkCall
	for _, v := range vals {
		name, args, ok := strings.Cut(v, "=")
		c := checkCall{name: name, args: json.RawMessage(`{}`)}
		if name == "" {
			return nil, cmdutil.Usagef(fmt.Sprintf("--call %q: no tool name", v))
		}
		if ok {
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
				return nil, cmdutil.Usagef(fmt.Sprintf("--call %s: ARGS must be a JSON object, got %s", name, textfmt.Preview([]byte(args), 80)))
			}
			c.args = json.RawMessage(args)
		}
		out = append(out, c)
	}
	return out, nil
}

func initDetail(s *connect.Session) string {
	res, err := s.Client.Initialize(context.Background())
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %s, protocol %s (%s era), capabilities: %s", res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion, s.Client.Era(), capabilityNames(res))
}

func capabilityNames(res *mcp.InitializeResult) string {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(res.Capabilities, &caps)
	var names []string
	for k := range caps {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// reportCheck prints the steps, the wire counts and, when the server asked
// for authorization, what discovery found (auth; with --json it is in the
// error object already) and, with --oauth, which grant the authorization
// ran and why (grant); then the contracts and the results --fail-on names
// (rep). JUnit and SARIF print rep alone.
func reportCheck(env *cmdutil.Env, o *CheckOptions, steps []checkStep, wire *string, auth *oauth.Discovery, grant string, firstErr error, rep *gate.Report) error {
	failed := rep.Failures()
	status := firstErr
	if status == nil && len(failed) > 0 {
		status = &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("check failed: %s: %s", failed[0].Rule, failed[0].Message)}
	}
	switch o.Gate.Format {
	case cmdutil.FormatJUnit, cmdutil.FormatSARIF:
		if err := o.Gate.WriteMachine(env, rep); err != nil {
			return err
		}
		return status
	case cmdutil.FormatJSON:
		out := map[string]any{"ok": status == nil, "steps": steps, "fail_on": rep.FailOn.String(), "results": resultsJSON(failed)}
		if grant != "" {
			out["oauth_grant"] = grant
		}
		if wire != nil {
			out["wire"] = *wire
		}
		if firstErr != nil {
			out["error"] = env.ErrorJSON(firstErr) // docs/errors.md: {"ok":false,"error":{...}}
		}
		cmdutil.WriteJSON(env.Out, out)
		return status
	}
	word := "ok"
	if status != nil {
		word = "FAILED"
	}
	fmt.Fprintf(env.Out, "sonde check: %s\n", word)
	for _, st := range steps {
		mark := "ok  "
		if !st.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(env.Out, "  %s %-17s %9s  %s\n", mark, st.Name, textfmt.Dur(time.Duration(st.MS*float64(time.Millisecond))), st.Detail)
		if st.Why != "" {
			fmt.Fprintf(env.Out, "       why: %s\n", st.Why)
		}
	}
	if auth != nil {
		fmt.Fprintf(env.Out, "  auth %s\n", auth.Summary())
	}
	if grant != "" {
		fmt.Fprintf(env.Out, "  auth grant: %s\n", grant)
	}
	if wire != nil {
		fmt.Fprintf(env.Out, "  wire %s\n", *wire)
	}
	for _, r := range o.Contracts.Rules() {
		mark, detail := "ok  ", contractDetail(&o.Contracts, r.ID)
		for _, res := range failed {
			if res.Rule == r.ID {
				mark, detail = "FAIL", res.Message
				break
			}
		}
		fmt.Fprintf(env.Out, "  %s %-17s %s\n", mark, r.ID, textfmt.Escape(detail))
	}
	counts := map[string]int{}
	for _, res := range failed {
		counts[res.Rule]++
	}
	for _, res := range failed {
		switch n := counts[res.Rule]; {
		case isContract(res.Rule) || n == 0:
		case n == 1:
			fmt.Fprintf(env.Out, "  FAIL %-17s %s\n", res.Rule, textfmt.Escape(res.Message))
		default:
			fmt.Fprintf(env.Out, "  FAIL %-17s %d results; the first: %s\n", res.Rule, n, textfmt.Escape(res.Message))
		}
		counts[res.Rule] = 0
	}
	return status
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
