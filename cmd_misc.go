package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/fixtures"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

// versionString is the stamped version, or the module version when built
// with go install, plus the VCS revision when known.
func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
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
--protocol-version V, --flood-count N, --stderr-flood-bytes N, --http ADDR, --http-json,
--http-token TOKEN, --session-requests N.`,
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
