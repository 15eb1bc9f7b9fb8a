package tap_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestFaultGoSDKClient: the official Go SDK's client as the host. An error
// rule's answer reaches it as the tool call's error, from the fixture and
// from server-everything; answers sent twice are ignored by it (the calls
// still succeed, with the same result as without the rule).
func TestFaultGoSDKClient(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	run := func(server []string, tool, args string, rules ...string) (string, string, error) {
		argv := []string{"-n", "3", "-c", "1", "-tool", tool, "-args", args, "-terminate", "500ms", "--", os.Args[0], "tap", "--no-record"}
		for _, r := range rules {
			argv = append(argv, "--fault", r)
		}
		cmd := exec.Command(bin, append(append(argv, "--"), server...)...)
		cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return string(out), stderr.String(), err
	}
	for _, tc := range []struct {
		name       string
		argv       func(t *testing.T) []string
		tool, args string
	}{
		{"fixture", func(t *testing.T) []string { return clitest.NewFixture(t).Argv() }, "echo", `{"value":"hi"}`},
		{"server-everything", func(t *testing.T) []string { return []string{peertest.Everything(t)} }, "echo", `{"message":"hi"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.argv(t)
			_, stderr, err := run(server, tc.tool, tc.args, "error:to-server,tool=echo,code=-32001,message=boom from the tap")
			if err == nil || !strings.Contains(stderr, "boom from the tap") {
				t.Errorf("error rule: %v\n%s", err, stderr)
			}
			want, stderr, err := run(server, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("no rule: %v\n%s", err, stderr)
			}
			got, stderr, err := run(server, tc.tool, tc.args, "duplicate:to-host,kind=response,tool=echo")
			if err != nil || gosdkResult(t, got) != gosdkResult(t, want) {
				t.Errorf("duplicate rule: %v\n%s\ngot %s\nwant %s", err, stderr, got, want)
			}
		})
	}
}

// gosdkResult is the result in the Go SDK client's report.
func gosdkResult(t *testing.T, report string) string {
	t.Helper()
	var r gosdkReport
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("report %q: %v", report, err)
	}
	return string(r.Result)
}
