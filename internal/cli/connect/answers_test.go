package connect_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	clitest.WriteTestFile(t, p, text)
	return p
}

// The server's requests answered headless, over stdio and Streamable HTTP:
// roots from --root, sampling from --sampling-reply, elicitation from
// --elicit-reply and --elicit-defaults.
func TestAnswersEverything(t *testing.T) {
	stdio := clitest.EverythingStdio(t)
	streamable := []string{"--url", peertest.EverythingHTTP(t, "streamableHttp") + "/mcp"}
	root := t.TempDir()
	textReply := writeFile(t, "reply.txt", "plain answer from a file\n")
	jsonReply := writeFile(t, "reply.json", `{"role":"assistant","content":{"type":"text","text":"json answer"},"model":"file-model"}`)
	decline := writeFile(t, "decline", "decline\n")
	accept := writeFile(t, "accept.json", `{"action":"accept","content":{"name":"Ada Lovelace","check":true}}`)
	for _, server := range []struct {
		name string
		args []string
	}{{"stdio", stdio}, {"streamable", streamable}} {
		t.Run(server.name, func(t *testing.T) {
			for _, tc := range []struct {
				name  string
				args  []string
				code  int
				wants []string
			}{
				{"roots", []string{"call", "get-roots-list", "--root", root}, cmdutil.ExitOK, []string{"file://" + root, "1 total"}},
				{"sampling text", []string{"call", "trigger-sampling-request", "--args", `{"prompt":"hi"}`, "--sampling-reply", textReply}, cmdutil.ExitOK,
					[]string{"plain answer from a file", `"model": "sonde"`}},
				{"sampling json", []string{"call", "trigger-sampling-request", "--args", `{"prompt":"hi"}`, "--sampling-reply", jsonReply}, cmdutil.ExitOK,
					[]string{"json answer", "file-model"}},
				{"elicit decline", []string{"call", "trigger-elicitation-request", "--elicit-reply", decline}, cmdutil.ExitOK, []string{"declined"}},
				{"elicit accept", []string{"call", "trigger-elicitation-request", "--elicit-reply", accept}, cmdutil.ExitOK, []string{"Name: Ada Lovelace", "Agreed to terms: true"}},
				{"url elicit accept", []string{"call", "trigger-url-elicitation", "--args", `{"url":"https://example.com/x"}`, "--elicit-reply", accept}, cmdutil.ExitOK,
					[]string{"completed the URL elicitation", `"action": "accept"`}},
				// Requests with params.task run as tasks sonde answers later.
				{"sampling as a task", []string{"call", "trigger-sampling-request-async", "--args", `{"prompt":"hi"}`, "--sampling-reply", textReply}, cmdutil.ExitOK,
					[]string{"[COMPLETED] Async sampling completed", "plain answer from a file", "io.modelcontextprotocol/related-task"}},
				{"elicitation as a task", []string{"call", "trigger-elicitation-request-async", "--elicit-reply", accept}, cmdutil.ExitOK,
					[]string{"[COMPLETED] User provided the requested information!", "Name: Ada Lovelace"}},
				// name is required and has no default: the answer is an error
				// the server turns into an isError result.
				{"elicit defaults without a required default", []string{"call", "trigger-elicitation-request", "--elicit-defaults"}, cmdutil.ExitToolError,
					[]string{"required field name has no default"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					args := append(append(tc.args, "--kill-after", "500ms"), server.args...)
					r := clitest.RunSonde(t, "", args...)
					if r.Code != tc.code {
						t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.Code, tc.code, r.Stdout, r.Stderr)
					}
					for _, w := range tc.wants {
						if !strings.Contains(r.Stdout, w) {
							t.Errorf("stdout lacks %q:\n%s", w, r.Stdout)
						}
					}
				})
			}
		})
	}
	t.Run("without a reply the tools are not offered", func(t *testing.T) {
		r := clitest.RunSonde(t, "", append([]string{"tools", "--kill-after", "500ms"}, stdio...)...)
		if r.Code != cmdutil.ExitOK || strings.Contains(r.Stdout, "trigger-sampling-request") || !strings.Contains(r.Stdout, "echo") {
			t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("no-client-tasks hides the async tools", func(t *testing.T) {
		r := clitest.RunSonde(t, "", append([]string{"tools", "--sampling-reply", textReply, "--no-client-tasks", "--kill-after", "500ms"}, stdio...)...)
		if r.Code != cmdutil.ExitOK || strings.Contains(r.Stdout, "trigger-sampling-request-async") || !strings.Contains(r.Stdout, "trigger-sampling-request") {
			t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		}
	})
	t.Run("trace shows the request from the server and the answer", func(t *testing.T) {
		r := clitest.RunSonde(t, "", append([]string{"call", "trigger-sampling-request", "--args", `{"prompt":"hi"}`, "--sampling-reply", textReply, "--trace", "--kill-after", "500ms"}, stdio...)...)
		if r.Code != cmdutil.ExitOK {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		for _, w := range []string{"server-request: request from the server: sampling/createMessage", "sampling/createMessage       answered after", `"result":{"role":"assistant"`} {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("trace lacks %q", w)
			}
		}
	})
}

func TestAnswersUsage(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, "f", "x")
	badJSON := writeFile(t, "bad.json", `{"role":"assistant"`)
	noModel := writeFile(t, "nomodel.json", `{"role":"assistant","content":{"type":"text","text":"x"}}`)
	badAction := writeFile(t, "act.json", `{"action":"maybe"}`)
	empty := writeFile(t, "empty", "  \n")
	for _, tc := range []struct {
		name string
		args []string
		line string
	}{
		{"missing root", []string{"--root", filepath.Join(dir, "nope")}, "sonde: --root: root " + filepath.Join(dir, "nope") + ": no such directory"},
		{"root is a file", []string{"--root", file}, "sonde: --root: root " + file + ": not a directory"},
		{"missing sampling reply", []string{"--sampling-reply", filepath.Join(dir, "nope")}, "sonde: --sampling-reply: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"sampling reply not JSON", []string{"--sampling-reply", badJSON}, "sonde: --sampling-reply " + badJSON + ": not valid JSON: unexpected end of JSON input"},
		{"sampling reply without model", []string{"--sampling-reply", noModel}, "sonde: --sampling-reply " + noModel + `: a CreateMessageResult needs role, content (an object, or a list of them) and model, e.g. {"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`},
		{"empty sampling reply", []string{"--sampling-reply", empty}, "sonde: --sampling-reply " + empty + ": the file is empty"},
		{"bad elicit action", []string{"--elicit-reply", badAction}, "sonde: --elicit-reply " + badAction + `: action "maybe": want accept, decline or cancel`},
		{"both elicit flags", []string{"--elicit-reply", badAction, "--elicit-defaults"}, "sonde: give --elicit-reply or --elicit-defaults, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"tools"}, tc.args...), "--", "no-such-server-is-started")
			clitest.CheckRun(t, clitest.RunSonde(t, "", args...), cmdutil.ExitUsage, tc.line+"\n")
		})
	}
}

// TestAnswersAsTasks runs the fixture's confirm tool with its elicitation
// sent as a task (params.task): sonde runs it as a task answered from
// --elicit-reply, unless --no-client-tasks, which answers it directly.
func TestAnswersAsTasks(t *testing.T) {
	yes := writeFile(t, "yes.json", `{"action":"accept","content":{"confirm":true}}`)
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"polled", []string{"--args", `{"task":"poll"}`}, `^task sonde-1-[0-9a-f]{12}: created working, completed; confirmed\n$`},
		// The reply file answered at once: the task had ended.
		{"cancel too late", []string{"--args", `{"task":"cancel"}`}, `^task sonde-1-\w+: created working, tasks/cancel \{"code":-32602,"message":"task sonde-1-\w+ has already ended \(completed\): it cannot be cancelled"\}; confirmed\n$`},
		{"not declared", []string{"--args", `{"task":"poll"}`, "--no-client-tasks"}, `^no task: the client answered directly; confirmed\n$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, "", f.Cmd(append([]string{"call", "confirm", "--elicit-reply", yes}, tc.args...))...)
			clitest.CheckRun(t, r, cmdutil.ExitOK, "")
			if !regexp.MustCompile(tc.out).MatchString(r.Stdout) {
				t.Fatalf("stdout %q, want %s", r.Stdout, tc.out)
			}
		})
	}
}

// TestAnswersAsTasksTrace: --trace names a task sonde runs for the server
// by the server's request, not as a tools/call.
func TestAnswersAsTasksTrace(t *testing.T) {
	yes := writeFile(t, "yes.json", `{"action":"accept","content":{"confirm":true}}`)
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "confirm", "--elicit-reply", yes, "--args", `{"task":"poll"}`, "--trace"})...)
	if r.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, re := range []string{
		`task sonde-1-\w+ \(sonde runs elicitation/create id "confirm-1" for the server\) working: waiting for sonde's user to answer`,
		`task sonde-1-\w+ \(sonde runs elicitation/create id "confirm-1" for the server\) completed \(end\)`,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stderr) {
			t.Errorf("trace lacks %s:\n%s", re, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "sonde: task sonde-1-") {
		t.Errorf("the task sonde runs is printed as the call's own task:\n%s", r.Stderr)
	}
}
