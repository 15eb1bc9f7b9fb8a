package tap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestTapInspectorHost: the official Inspector's CLI as the host,
// launching sonde tap in front of server-everything: it gets the same
// tool list and the same echo answer as without the tap, the recording
// has the session's frames, and an error rule's answer reaches it as the
// call's error.
func TestTapInspectorHost(t *testing.T) {
	everything := peertest.Everything(t)
	inspector := func(args []string, tap ...string) (string, string, bool) {
		var server []string
		if tap != nil {
			for _, kv := range clitest.ChildEnv() {
				args = append([]string{"-e", kv}, args...)
			}
			server = append(append([]string{os.Args[0], "tap"}, tap...), "--", everything)
		} else {
			server = []string{everything}
		}
		return peertest.Run(t, peertest.Inspector(t, append(append(args, "--"), server...)...))
	}
	call := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=through the tap"}
	list := []string{"--method", "tools/list"}
	rec := filepath.Join(t.TempDir(), "inspector.jsonl")

	wantList, stderr, ok := inspector(list)
	if !ok {
		t.Fatalf("direct tools/list: %s", stderr)
	}
	gotList, stderr, ok := inspector(list, "--record", rec)
	if !ok || gotList != wantList {
		t.Errorf("tools/list through the tap (%v): %s\ngot  %.300s\nwant %.300s", ok, stderr, gotList, wantList)
	}
	var frames int
	for _, r := range readCapture(t, rec) {
		if r.Type == capture.TypeFrame {
			frames++
		}
	}
	if frames < 4 {
		t.Errorf("the recording has %d frames", frames)
	}

	wantCall, stderr, ok := inspector(call)
	if !ok || !strings.Contains(wantCall, "through the tap") {
		t.Fatalf("direct call: %v %s\n%s", ok, wantCall, stderr)
	}
	gotCall, stderr, ok := inspector(call, "--no-record")
	if !ok || gotCall != wantCall {
		t.Errorf("call through the tap (%v): %s\ngot  %s\nwant %s", ok, stderr, gotCall, wantCall)
	}
	out, stderr, ok := inspector(call, "--no-record", "--fault", "error:to-server,tool=echo,code=-32001,message=boom for the inspector")
	if ok || !strings.Contains(out+stderr, "boom for the inspector") {
		t.Errorf("error rule: ok %v\nstdout %s\nstderr %s", ok, out, stderr)
	}
}
