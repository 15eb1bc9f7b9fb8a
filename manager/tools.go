package manager

// The aggregated tools of the servers: listing them in parallel, naming
// them server/tool with conflicts flagged, and routing a namespaced name
// back to its server.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// Tools lists the tools of the named servers (every server when names is
// empty), starting each one that is not running, in parallel. Entries come
// in the order of the servers, then of each server's list; an entry whose
// tool name another server also has is marked Conflict. The servers that
// could not list their tools are in errs, by name; the others are listed.
func (m *Manager) Tools(ctx context.Context, names ...string) (entries []ToolEntry, errs map[string]error) {
	return m.ToolsEach(ctx, nil, names...)
}

// ToolsEach is Tools, calling each (when not nil) as each server's list
// comes, or its error (for a progress display).
func (m *Manager) ToolsEach(ctx context.Context, each func(server string, err error), names ...string) (entries []ToolEntry, errs map[string]error) {
	if len(names) == 0 {
		names = m.order
	}
	return m.toolsWith(ctx, each, m.ListTools, names)
}

// RunningTools is Tools over the servers running now, starting none: a
// server that is not running is left out (and one that ends meanwhile is
// in errs).
func (m *Manager) RunningTools(ctx context.Context) (entries []ToolEntry, errs map[string]error) {
	var names []string
	m.mu.Lock()
	for _, n := range m.order {
		if s := m.servers[n]; s.state == Ready && s.client != nil {
			names = append(names, n)
		}
	}
	m.mu.Unlock()
	list := func(ctx context.Context, name string) ([]mcp.Tool, error) {
		m.mu.Lock()
		c := m.servers[name].client
		m.mu.Unlock()
		if c == nil {
			return nil, &client.Error{Code: client.CodeClosed, Message: "server " + name + " is not running"}
		}
		tools, err := c.ListTools(ctx)
		if err == nil {
			m.mu.Lock()
			m.servers[name].tools = tools
			m.mu.Unlock()
		}
		return tools, err
	}
	return m.toolsWith(ctx, nil, list, names)
}

// toolsWith lists the tools of names in parallel with list and
// aggregates them (Tools).
func (m *Manager) toolsWith(ctx context.Context, each func(server string, err error), list func(context.Context, string) ([]mcp.Tool, error), names []string) (entries []ToolEntry, errs map[string]error) {
	lists := make([][]mcp.Tool, len(names))
	errs = map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			tools, err := list(ctx, n)
			mu.Lock()
			defer mu.Unlock()
			if each != nil {
				each(n, err)
			}
			if err != nil {
				errs[n] = err
				return
			}
			lists[i] = tools
		})
	}
	wg.Wait()
	return Aggregate(names, lists), errs
}

// Aggregate names the tools of servers names (lists[i] are names[i]'s) as
// server/tool, in the order of the servers, then of each list; an entry
// whose tool name another server also has lists those servers in
// Conflicts. It is the one rule of Tools, RunningTools and the aggregated
// inspector.
func Aggregate(names []string, lists [][]mcp.Tool) []ToolEntry {
	count := map[string]map[string]bool{}
	for i, n := range names {
		for _, t := range lists[i] {
			if count[t.Name] == nil {
				count[t.Name] = map[string]bool{}
			}
			count[t.Name][n] = true
		}
	}
	var entries []ToolEntry
	for i, n := range names {
		for _, t := range lists[i] {
			e := ToolEntry{Server: n, Name: n + "/" + t.Name, Tool: t}
			if len(count[t.Name]) > 1 {
				for other := range count[t.Name] {
					if other != n {
						e.Conflicts = append(e.Conflicts, other)
					}
				}
				sort.Strings(e.Conflicts)
			}
			entries = append(entries, e)
		}
	}
	return entries
}

// ToolEntry is one tool of one server, under its namespaced name.
type ToolEntry struct {
	Server string
	// Name is "server/tool".
	Name string
	Tool mcp.Tool
	// Conflicts are the other servers with a tool of the same name.
	Conflicts []string
}

// ListTools lists the tools of one server (starting it if needed) and
// keeps them, for the read-only hints of its calls.
func (m *Manager) ListTools(ctx context.Context, name string) ([]mcp.Tool, error) {
	c, err := m.Client(ctx, name)
	if err != nil {
		return nil, err
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.servers[name].tools = tools
	m.mu.Unlock()
	return tools, nil
}

// Route splits a namespaced tool name into its server and tool: the
// longest server name followed by "/" wins (a server's name may itself
// hold a slash).
func (m *Manager) Route(namespaced string) (server, tool string, err error) {
	for _, n := range m.order {
		if rest, ok := strings.CutPrefix(namespaced, n+"/"); ok && rest != "" && len(n) > len(server) {
			server, tool = n, rest
		}
	}
	if server == "" {
		return "", "", fmt.Errorf("%w: %q is not server/tool for any server (the servers are: %s)", ErrUnknownServer, namespaced, strings.Join(m.order, ", "))
	}
	return server, tool, nil
}
