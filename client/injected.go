package client

import (
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Injected reports whether id is one sonde tap gives a request it injected
// into a host's session: "sonde-PID-N" (stdio) or "sonde-inject-N" (HTTP),
// string ids no host's request has been seen to use, and the tap's own for
// the answers it keeps from the host. The recording has these requests'
// frames and outcomes like the host's; consumers mark them.
func Injected(id jsonrpc.ID) bool {
	s, ok := id.Str()
	if !ok {
		return false
	}
	rest, ok := strings.CutPrefix(s, "sonde-")
	if !ok {
		return false
	}
	pid, n, ok := strings.Cut(rest, "-")
	return ok && (digits(pid) || pid == "inject") && digits(n)
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
