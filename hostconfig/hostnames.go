package hostconfig

import (
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// hostFlags are the short names of the hosts (--host NAME), in the order
// of paths.For's Hosts.
var hostFlags = [...]struct{ flag, host string }{
	{"claude-desktop", paths.ClaudeDesktop},
	{"claude-code", paths.ClaudeCode},
	{"cursor", paths.Cursor},
	{"vscode", paths.VSCode},
	{"windsurf", paths.Windsurf},
	{"cline", paths.Cline},
	{"gemini", paths.Gemini},
	{"codex", paths.Codex},
	{"zed", paths.Zed},
	{"opencode", paths.Opencode},
	{"goose", paths.Goose},
	{"lmstudio", paths.LMStudio},
}

// HostFlags returns the short names --host takes, in a fixed order.
func HostFlags() []string {
	out := make([]string, len(hostFlags))
	for i, h := range hostFlags {
		out[i] = h.flag
	}
	return out
}

// HostByName returns the host that name names: a short name of HostFlags
// or a host's own name ("Gemini CLI"), in any case, with spaces, '-' and
// '_' ignored.
func HostByName(name string) (string, bool) {
	norm := func(s string) string {
		return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
	}
	for _, h := range hostFlags {
		if norm(name) == norm(h.flag) || norm(name) == norm(h.host) {
			return h.host, true
		}
	}
	return "", false
}
