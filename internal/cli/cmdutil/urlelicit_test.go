package cmdutil_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// urlBlock is what sonde prints on stderr for the fixture's url-required
// with its defaults (elicitation id N).
func urlBlock(n string) string {
	return "sonde: sonde-fixture 0.1.0 asks you to open 1 URL before the request can go on (URL elicitation; sonde does not open it):\n" +
		"  [1] Open this URL to authorize the fixture, then retry the call.\n" +
		"      https://example.com/sonde-fixture/authorize\n" +
		"      host example.com · elicitation id fixture-url-" + n + "\n" +
		"sonde: open it in a browser and complete it, then retry the request\n"
}

const urlErrLine = "sonde: MCP_URL_REQUIRED: server error -32042: url-required: the fixture needs the user to open a URL first (1 URL to open before a retry)\n"

// TestCallURLRequired: a -32042 answer is exit 12 (MCP_URL_REQUIRED) with
// the URLs on stderr; with --json the error carries them structured; a
// -32042 with bad data stays MCP_ERROR and says why, with no URL printed.
func TestCallURLRequired(t *testing.T) {
	cases := []struct {
		name   string
		sub    []string
		code   int
		stdout string // JSON compared as a value; "" for none
		stderr string
	}{
		{
			name: "text", sub: []string{"call", "url-required"},
			code: cmdutil.ExitURLRequired, stderr: urlBlock("1") + urlErrLine,
		},
		{
			name: "json", sub: []string{"call", "url-required", "--json"},
			code: cmdutil.ExitURLRequired, stderr: urlBlock("1") + urlErrLine,
			stdout: `{"ok":false,"error":{"code":"MCP_URL_REQUIRED","message":"server error -32042: url-required: the fixture needs the user to open a URL first (1 URL to open before a retry)","rpc_code":-32042,` +
				`"data":{"elicitations":[{"elicitationId":"fixture-url-1","message":"Open this URL to authorize the fixture, then retry the call.","mode":"url","url":"https://example.com/sonde-fixture/authorize"}]},` +
				`"elicitations":[{"elicitationId":"fixture-url-1","message":"Open this URL to authorize the fixture, then retry the call.","url":"https://example.com/sonde-fixture/authorize"}]}}`,
		},
		{
			name: "two URLs, a message that would drive the terminal",
			sub:  []string{"call", "url-required", "--args", `{"count":2,"url":"https://pay.example:8443/p","message":"Pay\u001b[2J now\nplease"}`},
			code: cmdutil.ExitURLRequired,
			stderr: "sonde: sonde-fixture 0.1.0 asks you to open 2 URLs before the request can go on (URL elicitation; sonde does not open it):\n" +
				"  [1] Pay\\x1b[2J now please\n" +
				"      https://pay.example:8443/p?step=1\n" +
				"      host pay.example:8443 · elicitation id fixture-url-1\n" +
				"  [2] Pay\\x1b[2J now please\n" +
				"      https://pay.example:8443/p?step=2\n" +
				"      host pay.example:8443 · elicitation id fixture-url-2\n" +
				"sonde: open it in a browser and complete it, then retry the request\n" +
				"sonde: MCP_URL_REQUIRED: server error -32042: url-required: the fixture needs the user to open a URL first (2 URLs to open before a retry)\n",
		},
		{
			name: "form-mode data", sub: []string{"call", "url-required", "--args", `{"data":"{\"elicitations\":[{\"mode\":\"form\",\"message\":\"Name?\"}]}"}`},
			code:   cmdutil.ExitRemote,
			stderr: "sonde: MCP_ERROR: server error -32042: url-required: the fixture needs the user to open a URL first (bad URLElicitationRequiredError data: elicitation 1 has mode \"form\", want \"url\")\n",
		},
		{
			name: "no data", sub: []string{"call", "url-required", "--json", "--args", `{"data":"null"}`},
			code:   cmdutil.ExitRemote,
			stdout: `{"ok":false,"error":{"code":"MCP_ERROR","message":"server error -32042: url-required: the fixture needs the user to open a URL first (bad URLElicitationRequiredError data: no data, want {\"elicitations\":[…]})","rpc_code":-32042,"data":null}}`,
			stderr: "sonde: MCP_ERROR: server error -32042: url-required: the fixture needs the user to open a URL first (bad URLElicitationRequiredError data: no data, want {\"elicitations\":[…]})\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.NewFixture(t).RunChecked("", tc.sub, nil, tc.code, tc.stderr)
			if tc.stdout == "" && r.Stdout != "" || tc.stdout != "" && (strings.Count(r.Stdout, "\n") != 1 || !clitest.SameJSON(t, r.Stdout, tc.stdout)) {
				t.Errorf("stdout = %s\nwant     %s", r.Stdout, tc.stdout)
			}
		})
	}
}

// TestScriptURLRequiredThenRetry: in one session, the first call fails
// with MCP_URL_REQUIRED (its URL on stderr, the elicitations in its
// output line) and the retry with the same arguments succeeds.
func TestScriptURLRequiredThenRetry(t *testing.T) {
	t.Parallel()
	f := clitest.NewFixture(t)
	call := `{"method":"tools/call","params":{"name":"url-required","arguments":{}}`
	r := clitest.RunSonde(t, call+"}\n"+call+`,"delay_ms":100}`+"\n", f.Cmd([]string{"script", "-"})...)
	clitest.CheckRun(t, r, cmdutil.ExitToolError, urlBlock("1")+"sonde: 1 of 2 script lines failed\n")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout:\n%s", r.Stdout)
	}
	if !strings.Contains(lines[0], `"ok":false,"error":{"code":"MCP_URL_REQUIRED"`) ||
		!strings.Contains(lines[0], `"elicitations":[{"elicitationId":"fixture-url-1","message":"Open this URL to authorize the fixture, then retry the call.","url":"https://example.com/sonde-fixture/authorize"}]`) {
		t.Errorf("line 1: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"ok":true`) || !strings.Contains(lines[1], "retried after the URL elicitation fixture-url-1") {
		t.Errorf("line 2: %s", lines[1])
	}
}

// TestURLRequiredEverything: server-everything's trigger-url-elicitation
// with errorPath, through `sonde script` in one session: the first call
// fails with MCP_URL_REQUIRED and its URL (https://modelcontextprotocol.io)
// on stderr; the retry succeeds (the server then sends elicitation/create in
// URL mode, which --elicit-reply accepts).
func TestURLRequiredEverything(t *testing.T) {
	bin := peertest.Everything(t)
	reply := filepath.Join(t.TempDir(), "ok.txt")
	clitest.WriteTestFile(t, reply, "accept\n")
	call := `{"method":"tools/call","params":{"name":"trigger-url-elicitation","arguments":{"url":"https://example.com","errorPath":true}}`
	r := clitest.RunSonde(t, call+"}\n"+call+`,"delay_ms":200}`+"\n", "script", "-", "--elicit-reply", reply, "--", bin)
	if r.Code != cmdutil.ExitToolError {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"asks you to open 1 URL before the request can go on", "\n      https://modelcontextprotocol.io\n", "host modelcontextprotocol.io · elicitation id "} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"code":"MCP_URL_REQUIRED"`) || !strings.Contains(lines[0], `"url":"https://modelcontextprotocol.io"`) ||
		!strings.Contains(lines[1], `"ok":true`) || !strings.Contains(lines[1], "User completed the URL elicitation flow") {
		t.Fatalf("stdout:\n%s", r.Stdout)
	}
}
