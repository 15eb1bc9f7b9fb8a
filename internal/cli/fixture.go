package cli

import (
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// NewCmdFixture is `sonde fixture`: the fault-injecting server of sonde's
// tests (package fixtures).
func NewCmdFixture(env *cmdutil.Env) *cobra.Command {
	var faults strings.Builder
	for _, f := range fixtures.Faults() {
		fmt.Fprintf(&faults, "  %-24s %s\n", f.Name, f.Summary)
	}
	var variants strings.Builder
	for _, v := range fixtures.AuthVariants() {
		fmt.Fprintf(&variants, "  %-24s %s\n", v.Name, v.Summary)
	}
	return &cobra.Command{
		Use:   "fixture [--fault NAME]... [flags]",
		Short: "Run sonde's fault-injecting MCP server on stdio (or HTTP)",
		Long: `Run the fixture server on stdin/stdout: tools echo, add, progress, fail, tool-error
and big, and faults that make it misbehave like real servers do. Point sonde at it:

  sonde call echo --args '{"value":"hi"}' -- sonde fixture --fault stdout-noise

With --http ADDR (loopback only, e.g. 127.0.0.1:0) it serves Streamable HTTP on /mcp and
HTTP+SSE on /sse instead, prints "listening on http://ADDR", and stops on SIGINT, SIGTERM
or stdin EOF.

Faults (docs/fixtures.md says what a correct client reports for each):
` + faults.String() + `
Flags: --fault NAME (repeatable), --pid-file PATH, --late-ms N, --page-size N,
--protocol-version V, --flood-count N, --stderr-flood-bytes N, --crlf (end lines
with "\r\n"), --echo-prefix TEXT, --era ERA, --http ADDR, --http-json, --http-token TOKEN,
--http-auth VARIANT (repeatable), --session-requests N.

Over HTTP the fixture also serves, without authorization, protected resource metadata
(/.well-known/oauth-protected-resource/mcp) naming the authorization server http://ADDR/as,
and that server's metadata (/.well-known/oauth-authorization-server/as); the 401s of
http-unauthorized point to them. With http-unauthorized, --http-auth VARIANT changes them:
` + variants.String(),
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" {
					return cmd.Help()
				}
			}
			if code := fixtures.Main(args, env.In, env.Out, env.Err); code != 0 {
				return &cmdutil.ExitStatus{Code: code}
			}
			return nil
		},
	}
}
