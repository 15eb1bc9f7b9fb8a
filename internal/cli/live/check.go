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
}

// CheckOptions are the flags of `sonde check`.
type CheckOptions struct {
	Server connect.Flags
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

The exit status is the one of the first failing step (0 when all pass).

` + cmdutil.ExitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, t, err := connect.Resolve(cmd, &o.Server, args, 0, "check takes no arguments before --")
			if err != nil {
				return err
			}
			return runCheck(cmd.Context(), env, &o, t)
		},
	}
	o.Server.Register(cmd.Flags())
	return cmd
}

// runCheck runs the steps of the health report and prints it.
func runCheck(ctx context.Context, env *cmdutil.Env, o *CheckOptions, t *connect.Target) error {
	f := &o.Server
	var steps []checkStep
	var firstErr error
	var auth *oauth.Discovery
	step := func(name string, start time.Time, detail string, err error) bool {
		st := checkStep{Name: name, OK: err == nil, MS: ms(time.Since(start)), Detail: detail}
		if err != nil {
			if name != "start+initialize" {
				st.Detail = err.Error() // not "0 tools" or "{}" as if it had answered
			}
			st.Error = cmdutil.ErrorJSON(err)
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

	t0 := time.Now()
	s, err := connect.Open(ctx, env, f, t)
	target := strings.Join(t.Argv, " ")
	if t.URL != "" {
		target = t.URL
	}
	if !step("start+initialize", t0, target, err) {
		return reportCheck(env, f.JSON, steps, nil, auth, env.AuthGrant(), firstErr)
	}
	defer s.Close()
	steps[0].Detail = initDetail(s)
	modern := s.Client.Era() == client.EraModern
	if modern {
		steps[0].Name = "start+discover"
	}

	t1 := time.Now()
	tools, err := s.Client.ListTools(ctx)
	step("tools/list", t1, fmt.Sprintf("%d tools", len(tools)), err)

	if !modern { // the modern era has no ping
		t2 := time.Now()
		err = s.Client.Ping(ctx)
		step("ping", t2, "{}", err)
	}

	st := s.Client.Stats()
	wire := fmt.Sprintf("%d frames sent; %d malformed, %d invalid, %d unknown, %d late, %d duplicate; %s on stderr",
		st.Sent, st.Malformed, st.Invalid, st.Unknown, st.Late, st.Duplicate, textfmt.Size(int(st.StderrBytes)))
	return reportCheck(env, f.JSON, steps, &wire, auth, env.AuthGrant(), firstErr)
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
// ran and why (grant).
func reportCheck(env *cmdutil.Env, asJSON bool, steps []checkStep, wire *string, auth *oauth.Discovery, grant string, firstErr error) error {
	if asJSON {
		out := map[string]any{"ok": firstErr == nil, "steps": steps}
		if grant != "" {
			out["oauth_grant"] = grant
		}
		if wire != nil {
			out["wire"] = *wire
		}
		if firstErr != nil {
			out["error"] = cmdutil.ErrorJSON(firstErr) // docs/errors.md: {"ok":false,"error":{...}}
		}
		cmdutil.WriteJSON(env.Out, out)
		return firstErr
	}
	status := "ok"
	if firstErr != nil {
		status = "FAILED"
	}
	fmt.Fprintf(env.Out, "sonde check: %s\n", status)
	for _, st := range steps {
		mark := "ok  "
		if !st.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(env.Out, "  %s %-17s %9s  %s\n", mark, st.Name, textfmt.Dur(time.Duration(st.MS*float64(time.Millisecond))), st.Detail)
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
	return firstErr
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
