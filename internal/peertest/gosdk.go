package peertest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// GoSDK returns the path of the official Go SDK's example server (v1.8.0,
// examples/server/everything), a modern-era peer that `make peers` builds
// with go install into interop/bin, outside sonde's go.mod.
func GoSDK(t testing.TB) string {
	t.Helper()
	return Need(t, filepath.Join("interop", "bin", "everything"))
}

// GoSDKClient returns the path of an MCP client built with the Go SDK
// (v1.8.0, interop/gosdk-client, its own module), which `make peers`
// builds into interop/bin: `gosdk-client [-n N] [-c C] [-tool NAME]
// [-args JSON] [-read URI] [-prompt NAME] (-url URL | -- COMMAND...)`
// prints one JSON line (the tools, the first result, calls_per_s, p50_ns,
// and the resource and prompt asked for); -url connects over Streamable
// HTTP.
func GoSDKClient(t testing.TB) string {
	t.Helper()
	return Need(t, filepath.Join("interop", "bin", "gosdk-client"))
}

// GoSDKHTTP runs the Go SDK's example server over Streamable HTTP on a free
// loopback port (-http=ADDR; every path is its endpoint) and returns its
// base URL once it accepts connections. It is killed when the test ends.
func GoSDKHTTP(t testing.TB) string {
	t.Helper()
	bin := GoSDK(t)
	addr := FreeAddr(t)
	return Serve(t, exec.Command(bin, "-http="+addr), addr, "the Go SDK's server", nil)
}
