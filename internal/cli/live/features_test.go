package live_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// The feature commands against server-everything, over stdio and
// Streamable HTTP.
func TestFeatureCommandsEverything(t *testing.T) {
	bin := peertest.Everything(t)
	base := peertest.EverythingHTTP(t, "streamableHttp")
	out := filepath.Join(t.TempDir(), "blob.bin")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, in any order
		stderr []string // substrings of stderr
		json   string   // when set, stdout is this JSON value
	}{
		{name: "resources", args: []string{"resources"}, stdout: []string{
			"demo://resource/static/document/architecture.md  architecture.md  text/markdown", "templates:",
			"demo://resource/dynamic/blob/{resourceId}  Dynamic Blob Resource  application/octet-stream"}},
		{name: "read text", args: []string{"read", "demo://resource/dynamic/text/5"}, stdout: []string{"Resource 5: This is a plaintext resource"}},
		{name: "read blob", args: []string{"read", "demo://resource/dynamic/blob/5"}, stdout: []string{"[blob demo://resource/dynamic/blob/5, ", " bytes, text/plain]"}},
		{name: "read blob to a file", args: []string{"read", "demo://resource/dynamic/blob/6", "--out", out}, stdout: []string{"written to " + out}},
		{name: "read unknown", args: []string{"read", "demo://resource/dynamic/text/0"}, code: cmdutil.ExitRemote},
		{name: "prompts", args: []string{"prompts"}, stdout: []string{"args-prompt", "city* state", "completable-prompt  department* name*"}},
		{name: "prompt", args: []string{"prompt", "args-prompt", "--args", `{"city":"Oslo"}`}, stdout: []string{"[user]\nWhat's weather in Oslo?\n"}},
		{name: "prompt embedding a resource", args: []string{"prompt", "resource-prompt", "--args", `{"resourceType":"Text","resourceId":"2"}`},
			stdout: []string{"[resource demo://resource/dynamic/text/2]\nResource 2: This is a plaintext resource"}},
		{name: "prompt json", args: []string{"prompt", "args-prompt", "--json", "--args", `{"city":"Oslo","state":"NO"}`},
			json: `{"ok":true,"result":{"messages":[{"role":"user","content":{"type":"text","text":"What's weather in Oslo, NO?"}}]}}`},
		{name: "prompt without a required argument", args: []string{"prompt", "args-prompt"}, code: cmdutil.ExitRemote},
		{name: "complete prompt", args: []string{"complete", "--prompt", "completable-prompt", "--arg", "department=S"}, stdout: []string{"Sales\nSupport\n"}},
		{name: "complete with context", args: []string{"complete", "--prompt", "completable-prompt", "--arg", "name=", "--context", "department=Sales"}, stdout: []string{"David\nEve\nFrank\n"}},
		{name: "complete template json", args: []string{"complete", "--resource-template", "demo://resource/dynamic/text/{resourceId}", "--arg", "resourceId=12", "--json"},
			json: `{"ok":true,"completion":{"values":["12"],"total":1}}`},
		{name: "log-level", args: []string{"log-level", "warning"}},
		{name: "ping json", args: []string{"ping"}, stdout: []string{"pong in "}},
		{name: "call as a task", args: []string{"call", "simulate-research-query", "--args", `{"topic":"tea"}`, "--task", "--task-ttl", "1m"},
			stdout: []string{"# Research Report: tea\n"}, stderr: []string{" working: Gathering sources...\n", " completed"}},
	}
	for _, transport := range []struct {
		name string
		tail []string
	}{{"stdio", []string{"--", bin}}, {"streamable", []string{"--url", base + "/mcp"}}} {
		t.Run(transport.name, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					r := clitest.RunSonde(t, "", append(append([]string(nil), tc.args...), transport.tail...)...)
					if r.Code != tc.code {
						t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, tc.code, r.Stdout, r.Stderr)
					}
					if strings.Contains(r.Stderr, "sonde: warning") {
						t.Errorf("a warning with a server that declares everything: %s", r.Stderr)
					}
					if tc.json != "" && !clitest.SameJSON(t, r.Stdout, tc.json) {
						t.Fatalf("stdout %s, want %s", r.Stdout, tc.json)
					}
					for _, want := range tc.stdout {
						if !strings.Contains(r.Stdout, want) {
							t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
						}
					}
					if slices.Contains(tc.args, "--out") {
						b, err := os.ReadFile(out)
						if err != nil || !strings.HasPrefix(string(b), "Resource 6: This is a base64 blob") {
							t.Fatalf("--out wrote %q (%v)", b, err)
						}
						os.Remove(out)
					}
					for _, want := range tc.stderr {
						if !strings.Contains(r.Stderr, want) {
							t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
						}
					}
				})
			}
		})
	}
}

// The fixture declares only tools: warnings, MCP_ERROR for what it does
// not implement, and log-level against its logging/setLevel.
func TestFeatureCommandsFixture(t *testing.T) {
	cases := []struct {
		name    string
		sub     []string
		code    int
		stdout  string
		json    bool
		errLine string
		warning string
		fixture []string // fixture arguments
	}{
		{name: "read undeclared", sub: []string{"read", "fixture://resource/1"}, stdout: "resource 1\n",
			warning: "sonde: warning: resources/read: the server did not declare the resources capability; sent anyway\n"},
		{name: "read json unknown", sub: []string{"read", "fixture://nope", "--json"}, code: cmdutil.ExitRemote, json: true,
			stdout:  `{"ok":false,"error":{"code":"MCP_ERROR","message":"server error -32002: resource not found: fixture://nope","rpc_code":-32002}}`,
			errLine: "sonde: MCP_ERROR: server error -32002: resource not found: fixture://nope\n"},
		{name: "prompt undeclared", sub: []string{"prompt", "prompt-1"}, code: cmdutil.ExitRemote,
			errLine: "sonde: MCP_ERROR: server error -32601: method not found: prompts/get\n",
			warning: "sonde: warning: prompts/get: the server did not declare the prompts capability; sent anyway\n"},
		{name: "read with progress restarting the deadline", sub: []string{"read", "fixture://progress/5/600", "--timeout", "2s", "--timeout-reset-on-progress"},
			stdout: "done 5 steps\n"},
		{name: "read with progress, no reset", sub: []string{"read", "fixture://progress/5/600", "--timeout", "2s"}, code: cmdutil.ExitTimeout,
			errLine: "sonde: MCP_TIMEOUT: resources/read id 2: no response within 2s; ..."},
		{name: "resources over pages", sub: []string{"resources"}, fixture: []string{"--page-size", "2"},
			stdout: "fixture://resource/1  resource 1  text/plain\nfixture://resource/2  resource 2  text/plain\nfixture://resource/3  resource 3  text/plain\n" +
				"fixture://resource/4  resource 4  text/plain\nfixture://resource/5  resource 5  text/plain\n\ntemplates:\n" +
				"fixture://a/{x}      fixture://a/{x}\nfixture://b/{x}/{y}  fixture://b/{x}/{y}\nfixture://c{?q}      fixture://c{?q}\n",
			warning: "sonde: warning: resources/list: the server did not declare the resources capability; sent anyway\n"},
		{name: "prompts json over pages", sub: []string{"prompts", "--json"}, fixture: []string{"--page-size", "3"}, json: true,
			stdout: `[{"name":"prompt-1","arguments":[{"name":"arg"}]},{"name":"prompt-2","arguments":[{"name":"arg","required":true}]},{"name":"prompt-3","arguments":[{"name":"arg"}]},{"name":"prompt-4","arguments":[{"name":"arg","required":true}]}]`},
		{name: "log-level filters", sub: []string{"log-level", "alert", "--wait", "500ms"}, stdout: "alert [fixture] fixture log at alert\nemergency [fixture] fixture log at emergency\n",
			warning: "sonde: warning: logging/setLevel: the server did not declare the logging capability; sent anyway\n"},
		{name: "log-level json", sub: []string{"log-level", "emergency", "--wait", "500ms", "--json"}, json: true,
			stdout: `{"level":"emergency","logger":"fixture","data":"fixture log at emergency"}`},
		{name: "ping", sub: []string{"ping", "--json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, "", f.Cmd(tc.sub, tc.fixture...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if prefix, ok := strings.CutSuffix(tc.errLine, "..."); ok && !strings.HasPrefix(clitest.SondeLine(r.Stderr), prefix) {
				t.Errorf("last line of stderr %q, want it to start with %q", clitest.SondeLine(r.Stderr), prefix)
			} else if !ok && tc.errLine != "" && clitest.SondeLine(r.Stderr)+"\n" != tc.errLine {
				t.Errorf("last line of stderr %q, want %q", clitest.SondeLine(r.Stderr), tc.errLine)
			}
			if tc.warning != "" && !strings.Contains(r.Stderr, tc.warning) {
				t.Errorf("stderr lacks %q:\n%s", tc.warning, r.Stderr)
			}
			switch {
			case tc.json && tc.stdout != "":
				if !clitest.SameJSON(t, r.Stdout, tc.stdout) {
					t.Fatalf("stdout %s, want %s", r.Stdout, tc.stdout)
				}
			case tc.stdout != "" && r.Stdout != tc.stdout:
				t.Fatalf("stdout %q, want %q", r.Stdout, tc.stdout)
			}
		})
	}
}

// Bad command lines are usage errors (exit 2) reported before any server
// is started.
func TestFeatureCommandsUsage(t *testing.T) {
	for _, tc := range []struct {
		sub     []string
		errLine string
	}{
		{[]string{"read"}, "sonde: read takes exactly one URI before --: sonde read URI -- COMMAND [ARG...]\n"},
		{[]string{"prompt", "p", "--args", `{"n":1}`}, `sonde: --args: prompt arguments are strings, e.g. '{"city":"Paris"}'` + "\n"},
		{[]string{"complete", "--arg", "a=b"}, "sonde: give exactly one of --prompt NAME and --resource-template URI\n"},
		{[]string{"complete", "--prompt", "p", "--resource-template", "x://{a}", "--arg", "a=b"}, "sonde: give exactly one of --prompt NAME and --resource-template URI\n"},
		{[]string{"complete", "--prompt", "p"}, "sonde: --arg NAME=VALUE is required (VALUE may be empty: --arg city=)\n"},
		{[]string{"complete", "--prompt", "p", "--arg", "a=", "--context", "nope"}, `sonde: --context "nope": want NAME=VALUE` + "\n"},
		{[]string{"log-level", "loud"}, "sonde: log level \"loud\": want one of debug, info, notice, warning, error, critical, alert, emergency\n"},
		{[]string{"ping", "extra"}, "sonde: ping takes no arguments before --\n"},
	} {
		t.Run(strings.Join(tc.sub, " "), func(t *testing.T) {
			clitest.CheckRefused(t, "", tc.sub, cmdutil.ExitUsage, tc.errLine)
		})
	}
}

// An interrupted `call --task` cancels the task on the server (tasks/cancel,
// answered) before it stops the server, and exits 130.
func TestCallTaskInterrupted(t *testing.T) {
	bin := peertest.Everything(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := clitest.WatchBuffer(`sonde: task \S+ working`)
	go func() {
		select {
		case <-stderr.Hit():
			cancel()
		case <-ctx.Done():
		}
	}()
	r := clitest.RunSondeWith(t, ctx, strings.NewReader(""), stderr, "call", "simulate-research-query", "--args", `{"topic":"tea"}`, "--task", "--trace", "--", bin)
	if r.Code != cmdutil.ExitInterrupted {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", r.Code, cmdutil.ExitInterrupted, r.Stderr)
	}
	if !regexp.MustCompile(`-> id \d+ +tasks/cancel `).MatchString(r.Stderr) || !regexp.MustCompile(`tasks/cancel +resolved`).MatchString(r.Stderr) {
		t.Fatalf("no tasks/cancel answered:\n%s", r.Stderr)
	}
	if got := clitest.SondeLine(r.Stderr); !strings.HasPrefix(got, "sonde: MCP_ABORTED: task ") {
		t.Fatalf("last line %q", got)
	}
}
