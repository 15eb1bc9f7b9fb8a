// Command sonde is a terminal inspector and debugger for MCP servers: it
// launches a server, speaks MCP to it, and shows everything the client
// knows. Run `sonde --help` for the subcommands. The command line is in
// internal/cli.
package main

import (
	"os"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/cli"
)

func main() {
	// The fixture re-executes sonde for the grandchild of some faults.
	if fixtures.RunRole() {
		return
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
