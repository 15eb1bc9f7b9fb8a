package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
)

// mcpHosts are the host configs' servers as sonde mcp sees them: an agent
// naming a server is not the user naming it, so the start rule is the one
// of the runs that do not name servers (sonde --all, doctor): a project's
// server starts only once its host or the user approved it
// (connect.Hosts.Unnamed).
type mcpHosts struct {
	h     connect.Hosts
	found hostconfig.Found
}

// loadMCPHosts reads the host config files ("": every known one).
func loadMCPHosts(file string) (*mcpHosts, error) {
	h, found, err := connect.LoadHosts(file)
	if err != nil {
		return nil, err
	}
	return &mcpHosts{h: h, found: found}, nil
}

// Names lists the configured servers' names, once each.
func (m *mcpHosts) Names() []string {
	var names []string
	for _, s := range m.found.Servers {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

// target resolves the server named name into what connect opens, or says
// why it may not start and how to let it.
func (m *mcpHosts) target(cmd *cobra.Command, f *connect.Flags, name string) (*connect.Target, error) {
	s, err := hostconfig.Find(m.found.Servers, name)
	if err != nil {
		return nil, err
	}
	gates, _ := m.h.Unnamed([]hostconfig.Server{s}) // an unreadable approvals file: no sonde approval
	if g := gates[0]; g.Held {
		return nil, fmt.Errorf("server %q is %s; a session may start it once it is approved: run %s (or approve it in its host), then session_start again", name, g.Why, g.Approve)
	}
	return connect.UseServer(cmd, f, m.h, s, nil)
}
