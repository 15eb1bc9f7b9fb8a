package connect_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestEraFlag runs the commands in each era against the fixture in the
// matching mode.
func TestEraFlag(t *testing.T) {
	cases := []struct {
		name    string
		sub     []string
		fixture []string
		code    int
		errLine string
		out     []string // regexps the output must match, in order
	}{
		{
			name: "check modern", sub: []string{"check", "--era", "modern"}, fixture: []string{"--era", "modern"},
			out: []string{`(?m)^  ok   start\+discover +\S+  sonde-fixture 0\.1\.0, protocol 2026-07-28 \(modern era\), capabilities: tools$`, `(?m)^  ok   tools/list `, `(?m)^  wire 2 frames sent`},
		},
		{
			name: "check auto, legacy server", sub: []string{"check", "--era", "auto"},
			out: []string{`(?m)^  ok   start\+initialize +\S+  sonde-fixture 0\.1\.0, protocol 2025-11-25 \(legacy era\)`, `(?m)^  ok   ping `},
		},
		{
			name: "check auto, modern server", sub: []string{"check", "--era", "auto"}, fixture: []string{"--era", "modern"},
			out: []string{`(?m)^  ok   start\+discover +\S+  .*\(modern era\)`},
		},
		{
			name: "legacy confirm: sonde answers the elicitation with an error", sub: []string{"call", "confirm"},
			out: []string{`^not confirmed: the client answered elicitation/create with an error: \{"code":-32601`},
		},
		{
			name: "modern confirm without elicitation", sub: []string{"call", "confirm", "--era", "modern"}, fixture: []string{"--era", "modern"},
			code: cmdutil.ExitRemote, errLine: "sonde: MCP_ERROR: server error -32021 MissingRequiredClientCapability: confirm needs the elicitation capability; the client did not declare it\n",
		},
		{
			name: "legacy client, modern server", sub: []string{"tools"}, fixture: []string{"--era", "modern"},
			code: cmdutil.ExitRemote, errLine: "sonde: MCP_ERROR: server error -32601: method not found: initialize (this server speaks only the modern era, 2026-07-28)\n",
		},
		{
			name: "bad era", sub: []string{"tools", "--era", "2026"},
			code: cmdutil.ExitUsage, errLine: `sonde: --era: unknown era "2026" (want legacy, modern or auto)` + "\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, "", f.Cmd(tc.sub, tc.fixture...)...)
			clitest.CheckRun(t, r, tc.code, tc.errLine)
			for _, re := range tc.out {
				if !regexp.MustCompile(re).MatchString(r.Stdout) {
					t.Errorf("stdout lacks %s:\n%s", re, r.Stdout)
				}
			}
		})
	}
}

func TestEraHelp(t *testing.T) {
	r := clitest.RunSonde(t, "", "call", "--help")
	if !strings.Contains(r.Stdout, "--era ERA") || !strings.Contains(r.Stdout, "legacy (initialize), modern (2026-07-28") {
		t.Errorf("call --help lacks --era:\n%s", r.Stdout)
	}
}

// TestEraConfirmWithReply: --elicit-reply answers the confirm tool in both
// eras: the legacy server's elicitation/create request, and the modern
// server's input_required (retried under a new id, as --trace shows).
func TestEraConfirmWithReply(t *testing.T) {
	reply := filepath.Join(t.TempDir(), "accept.json")
	clitest.WriteTestFile(t, reply, `{"action":"accept","content":{"confirm":true}}`)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "confirm", "--era", era, "--elicit-reply", reply, "--trace"}, "--era", era)...)
			if r.Code != 0 || strings.TrimSpace(r.Stdout) != "confirmed" {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
			}
			retried := strings.Contains(r.Stderr, "(retry of id 2)")
			if retried != (era == "modern") {
				t.Errorf("retry shown: %v, stderr:\n%s", retried, r.Stderr)
			}
		})
	}
}
