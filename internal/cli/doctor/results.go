package doctor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
)

// ErrNoServer is Results' error when no configured server has the name
// asked for.
var ErrNoServer = errors.New("no such configured server")

// Results runs sonde doctor's checklist over every configured server (or
// only those named server, when it is not "") and returns each server's
// Result, in the order sonde doctor --json prints them, and the config
// files with problems. Unlike doctor's --server, naming a server here
// approves nothing: a project server nobody approved comes back not
// approved and unchecked, as sonde mcp's doctor tool (which an agent
// drives) must have it. Each step may take timeout; jobs servers are
// checked at once.
func Results(ctx context.Context, server string, timeout time.Duration, jobs int) ([]Result, []FileProblem, error) {
	h, found, err := connect.LoadHosts("")
	if err != nil {
		return nil, nil, err
	}
	var servers []hostconfig.Server
	for _, s := range found.Servers {
		if server == "" || s.Name == server {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 && server != "" {
		return nil, nil, fmt.Errorf("%w: %q (sonde config list shows the servers of the hosts' config files)", ErrNoServer, server)
	}
	// An approvals file that cannot be read holds every project server
	// its host did not approve: the gates are good either way.
	held, _ := h.Unnamed(servers)
	o := &Options{Jobs: max(jobs, 1), Timeout: timeout, JSON: true}
	c := checker{hosts: h, timeout: timeout, problems: found.Problems}
	results, todo := planChecks(servers, held)
	c.checkAll(ctx, nil, o, servers, results, todo)
	return results, fileProblems(found.Problems), nil
}
