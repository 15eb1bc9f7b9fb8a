// Package peertest starts the real MCP servers the interop tests run
// against: the npm packages pinned in interop/package.json and installed by
// `make peers`. Without them a test is skipped with a message saying how to
// install them, except in CI (CI set), where it fails.
package peertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	addr := FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, mode)
	cmd.Env = append(os.Environ(), "PORT="+port)
	return Serve(t, cmd, addr, "server-everything "+mode, nil)
}

// FreeAddr is a loopback address (127.0.0.1:PORT) where nothing listens
// now: a port the system just handed out and took back.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Serve starts cmd, a server that will listen on addr, and returns
// http://addr once a connection is accepted there (within 20 s; what
// names it in the failure). The cleanup kills and reaps it; stderr, when
// not nil, is shown with a failure to listen.
func Serve(t testing.TB, cmd *exec.Cmd, addr, what string, stderr fmt.Stringer) string {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			var text string
			if stderr != nil {
				text = stderr.String()
			}
			t.Fatalf("%s did not listen on %s: %v\n%s", what, addr, err, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
