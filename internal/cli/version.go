package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/fixtures"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3"
// (make build, make release). Unstamped it is "dev".
var version = "dev"

// versionString is what `sonde --version` prints: the stamped version, or
// else what the Go toolchain recorded in the binary.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return resolveVersion(version, info)
}

// resolveVersion is the stamped version when there is one. Otherwise it is
// the main module's version from info (go install ...@v1.2.3 records it), or
// "dev" followed by the VCS revision and "+dirty" for uncommitted changes
// (a build from a clone), or just "dev". info may be nil.
func resolveVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev (" + rev + dirty + ")"
}

func newVersionCmd(io streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print sonde's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(io.out, "sonde "+versionString())
			return nil
		},
	}
}

func newFixtureCmd(io streams) *cobra.Command {
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
			if code := fixtures.Main(args, io.in, io.out, io.err); code != 0 {
				return &exitStatus{code: code}
			}
			return nil
		},
	}
}
