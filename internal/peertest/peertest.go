// Package peertest starts the real MCP servers the interop tests run
// against: the npm packages pinned in interop/package.json and installed by
// `make peers`. Without them a test is skipped with a message saying how to
// install them, except in CI (CI set), where it fails.
package peertest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Root is the repository's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Need returns the absolute path of a file installed by `make peers`
// (relative to the repository root), or skips (fails in CI) when it is not
// there.
func Need(t testing.TB, rel string) string {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join(Root(), rel))
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("interop peer missing in CI (make peers): %v", err)
		}
		t.Skipf("interop peer not installed (run make peers, or make test): %v", err)
	}
	return path
}

// Everything returns the path of server-everything's executable.
func Everything(t testing.TB) string {
	t.Helper()
	return Need(t, filepath.Join("interop", "node_modules", ".bin", "mcp-server-everything"))
}

// EverythingHTTP runs server-everything over HTTP on a free loopback port
// (mode "streamableHttp", endpoint /mcp, or "sse", endpoints /sse and
// /message) and returns its base URL once it accepts connections. The
// server is killed when the test ends.
func EverythingHTTP(t testing.TB, mode string) string {
	t.Helper()
	bin := Everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + port
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s: %v", mode, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
