package capfile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestReplayServeFault: sonde's client against `sonde replay --serve
// --fault` (a real subprocess): an error rule answers the call in the
// mock's place, and says so on the mock's stderr; duplicate and noise
// rules give the client what lint then finds in its recording; a bad rule
// is a usage error.
func TestReplayServeFault(t *testing.T) {
	orig, _ := record(t, "", []string{"call", "echo", "--args", `{"value":"hi"}`})

	r := clitest.RunSonde(t, "", mockCmd([]string{"call", "echo", "--args", `{"value":"hi"}`}, orig, "--fault", "error:to-server,tool=echo,code=-32001,message=boom")...)
	if r.Code != cmdutil.ExitRemote || !strings.Contains(r.Stderr, "-32001") || !strings.Contains(r.Stderr, "boom") {
		t.Errorf("error rule: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}

	replayed := filepath.Join(t.TempDir(), "replayed.jsonl")
	r = clitest.RunSonde(t, "", mockCmd([]string{"call", "echo", "--args", `{"value":"hi"}`, "--record", replayed}, orig,
		"--fault", "noise:to-host,tool=echo,kind=response,text=chaos noise", "--fault", "duplicate:to-host,tool=echo")...)
	if r.Code != cmdutil.ExitOK || r.Stdout != "hi\n" {
		t.Fatalf("noise and duplicate: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	lint := clitest.RunSonde(t, "", "lint", replayed)
	for _, rule := range []string{"not-json", "duplicate-response"} {
		if lint.Code != 1 || !strings.Contains(lint.Stdout, " "+rule+"\n") {
			t.Errorf("lint: exit %d, no %s\n%s", lint.Code, rule, lint.Stdout)
		}
	}

	r = clitest.RunSonde(t, "", "replay", "--serve", orig, "--fault", "drop:to-host,every=0")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, `fault rule "drop:to-host,every=0": at character 20`) {
		t.Errorf("bad rule: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestReplayServeFaultHTTP: the same over HTTP (--listen): an error rule
// answers the call in the mock's place; answers sent twice reach the
// client's recording as a duplicate lint finds.
func TestReplayServeFaultHTTP(t *testing.T) {
	orig, _ := record(t, "", []string{"call", "echo", "--args", `{"value":"hi"}`})
	base := listenMock(t, orig, "--fault", "error:to-server,tool=echo,code=-32001,message=boom over http")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", base+"/mcp")
	if r.Code != cmdutil.ExitRemote || !strings.Contains(r.Stderr, "boom over http") {
		t.Errorf("error rule: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	base = listenMock(t, orig, "--fault", "duplicate:to-host,tool=echo,kind=response")
	replayed := filepath.Join(t.TempDir(), "replayed.jsonl")
	r = clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"hi"}`, "--url", base+"/mcp", "--record", replayed)
	if r.Code != cmdutil.ExitOK || r.Stdout != "hi\n" {
		t.Fatalf("duplicate: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	if lint := clitest.RunSonde(t, "", "lint", replayed); lint.Code != 1 || !strings.Contains(lint.Stdout, " duplicate-response\n") {
		t.Errorf("lint: exit %d\n%s", lint.Code, lint.Stdout)
	}
}
