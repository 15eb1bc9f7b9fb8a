package live_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/otlptest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/manager"
)

// hostServers writes a Claude Desktop config file listing the fixture
// under each name in fixtures (each with its own pid file) and the
// extra entries, in a fresh home (the state folder is there too), and
// returns the file and the fixtures by name.
func hostServers(t *testing.T, fixtures []string, extra map[string]any) (string, map[string]*clitest.Fixture) {
	t.Helper()
	home := t.TempDir()
	clitest.HostHome(t, home, t.TempDir())
	servers := map[string]any{}
	fx := map[string]*clitest.Fixture{}
	env := map[string]string{}
	for _, kv := range clitest.ChildEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, name := range fixtures {
		f := clitest.NewFixture(t)
		argv := f.Argv()
		servers[name] = map[string]any{"command": argv[0], "args": argv[1:], "env": env}
		fx[name] = f
	}
	for k, v := range extra {
		servers[k] = v
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	file := filepath.Join(home, "hosts", "claude_desktop_config.json")
	clitest.WriteTestFile(t, file, string(b))
	return file, fx
}

// TestToolsAll: the fixture under two names lists every tool twice,
// namespaced, with the conflicts flagged, and --server chooses among the
// servers: the one not chosen never runs.
func TestToolsAll(t *testing.T) {
	cfg, fx := hostServers(t, []string{"alpha", "beta", "gamma"}, nil)

	r := clitest.RunSonde(t, "", "tools", "--config", cfg, "--server", "alpha", "--server", "beta")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "sonde: 9 tool names are in several servers: call them as server/tool\n")
	for _, want := range []string{`alpha/echo +conflict: also in beta +Returns value`, `beta/add +conflict: also in alpha +Adds two numbers\.`} {
		if !regexp.MustCompile(`(?m)^` + want).MatchString(r.Stdout) {
			t.Errorf("no %q in\n%s", want, r.Stdout)
		}
	}
	fx["alpha"].AssertStarted(1)
	fx["beta"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)

	r = clitest.RunSonde(t, "", "tools", "--config", cfg, "--all", "--json")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	var out struct {
		OK    bool `json:"ok"`
		Tools []struct {
			Name      string   `json:"name"`
			Server    string   `json:"server"`
			Conflicts []string `json:"conflicts"`
		} `json:"tools"`
		Conflicts map[string][]string `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatal(err, r.Stdout)
	}
	if !out.OK || len(out.Tools) != 27 || strings.Join(out.Conflicts["echo"], ",") != "alpha,beta,gamma" {
		t.Fatalf("json: %s", r.Stdout)
	}
	if out.Tools[0].Name != "alpha/echo" || strings.Join(out.Tools[0].Conflicts, ",") != "beta,gamma" {
		t.Fatalf("first tool: %+v", out.Tools[0])
	}
	fx["gamma"].AssertStarted(1)
}

// TestCallAllStartsOnlyItsServer: call server/tool --all starts that
// server only (pid probes: the others never ran), and an unknown server is
// a usage error that starts nothing.
func TestCallAllStartsOnlyItsServer(t *testing.T) {
	cfg, fx := hostServers(t, []string{"alpha", "beta", "gamma"}, nil)
	r := clitest.RunSonde(t, "", "call", "beta/echo", "--args", `{"value":"routed"}`, "--config", cfg, "--all")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if strings.TrimSpace(r.Stdout) != "routed" {
		t.Fatalf("stdout %q", r.Stdout)
	}
	fx["alpha"].AssertStarted(0)
	fx["beta"].AssertStarted(1)
	fx["gamma"].AssertStarted(0)

	// --trace: the routed server's events, each line led by its name.
	r = clitest.RunSonde(t, "", "call", "beta/echo", "--args", `{"value":"traced"}`, "--config", cfg, "--all", "--trace")
	if r.Code != cmdutil.ExitOK || !regexp.MustCompile(`(?m)^beta +\S+ +-> id 1 +initialize`).MatchString(r.Stderr) ||
		!regexp.MustCompile(`(?m)^beta +\S+ +id 3 +tools/call echo +resolved`).MatchString(r.Stderr) || regexp.MustCompile(`(?m)^(alpha|gamma) `).MatchString(r.Stderr) {
		t.Fatalf("trace:\n%s", r.Stderr)
	}

	r = clitest.RunSonde(t, "", "call", "delta/echo", "--config", cfg, "--all")
	clitest.CheckRun(t, r, cmdutil.ExitUsage, `sonde: no such server: "delta/echo" is not server/tool for any server (the servers are: alpha, beta, gamma)`+"\n")
	r = clitest.RunSonde(t, "", "call", "echo", "--config", cfg, "--server", "alpha", "--server", "beta")
	clitest.CheckRun(t, r, cmdutil.ExitUsage, `sonde: no such server: "echo" is not server/tool for any server (the servers are: alpha, beta)`+"\n")
	for name, f := range fx {
		if want := map[string]int{"beta": 2}[name]; len(f.PIDs()) != want { // beta: the call and the traced call
			t.Fatalf("%s started %d times, want %d: a usage error started a server", name, len(f.PIDs()), want)
		}
	}
	// A command that takes one server refuses several.
	r = clitest.RunSonde(t, "", "ping", "--config", cfg, "--server", "alpha", "--server", "beta")
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "talks to one server") {
		t.Fatalf("ping with two servers: %d %s", r.Code, r.Stderr)
	}
}

// TestCallAllFailureReport: a failed call writes the failure report, which
// `sonde report` prints (and --json), without the secret passed as an
// argument (the fixture echoes it in its error); with --record it also
// goes beside the capture. A call of the fixture's crash (no read-only
// hint) says its execution is uncertain, and why it stopped.
func TestCallAllFailureReport(t *testing.T) {
	const secret = "sk-live-5ecret-0042"
	cfg, _ := hostServers(t, []string{"alpha", "beta"}, nil)
	capFile := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", "call", "alpha/fail", "--args", `{"message":"`+secret+`"}`, "--config", cfg, "--all", "--record", capFile)
	if r.Code != cmdutil.ExitRemote || !strings.Contains(r.Stderr, "sonde: failure report: sonde report") {
		t.Fatalf("call: %d\n%s", r.Code, r.Stderr)
	}
	beside, err := os.ReadFile(strings.TrimSuffix(capFile, ".jsonl") + ".report.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report"}, {"report", "--json"}} {
		r = clitest.RunSonde(t, "", args...)
		clitest.CheckRun(t, r, cmdutil.ExitOK, "")
		for _, out := range []string{r.Stdout, string(beside)} {
			if strings.Contains(out, secret) || strings.Contains(out, "5ecret") {
				t.Fatalf("the report leaks the argument:\n%s", out)
			}
			for _, want := range []string{"alpha", "tools/call", "MCP_ERROR", "-32001"} {
				if !strings.Contains(out, want) {
					t.Errorf("report has no %q:\n%s", want, out)
				}
			}
		}
	}

	r = clitest.RunSonde(t, "", "call", "beta/crash", "--config", cfg, "--all", "--json")
	if r.Code != cmdutil.ExitExited || !strings.Contains(r.Stderr, "execution uncertain") || !strings.Contains(r.Stdout, `"uncertain":true`) || !strings.Contains(r.Stdout, `"reason":"process-failure"`) {
		t.Fatalf("crash: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "report", "--json")
	var rep manager.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.Server != "beta" || rep.Code != "MCP_PROCESS_EXIT" || !rep.Uncertain || rep.Hash == "" || rep.Exit != "exit code 3" {
		t.Fatalf("report after the crash: %v %s", err, r.Stdout)
	}
}

// TestQuarantineAcrossRuns: a server that never starts is quarantined
// after --max-failures runs (the state is kept per user), then refused
// at once with MCP_QUARANTINED; `sonde servers approve` refuses while its
// configuration is unchanged.
func TestQuarantineAcrossRuns(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	cfg, _ := hostServers(t, nil, map[string]any{"broken": map[string]any{"command": missing}})
	for i := range 2 {
		r := clitest.RunSonde(t, "", "call", "broken/x", "--config", cfg, "--all", "--max-failures", "2")
		if r.Code != cmdutil.ExitSpawn {
			t.Fatalf("run %d: %d %s", i, r.Code, r.Stderr)
		}
		if i == 0 { // the next run sees the failure
			r = clitest.RunSonde(t, "", "servers", "--config", cfg, "--json")
			var sts []struct {
				State    string `json:"state"`
				Failures int    `json:"failures"`
				Why      string `json:"why"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &sts); err != nil || len(sts) != 1 || sts[0].Failures != 1 ||
				(sts[0].State != "backing off" && sts[0].State != "failed") || !strings.HasPrefix(sts[0].Why, "MCP_SPAWN: cannot start") {
				t.Fatalf("servers after one failure: %v %s", err, r.Stdout)
			}
		}
	}
	r := clitest.RunSonde(t, "", "call", "broken/x", "--config", cfg, "--all", "--max-failures", "2")
	if r.Code != cmdutil.ExitQuarantined || !strings.Contains(r.Stderr, "MCP_QUARANTINED: server broken is quarantined after 2 failures in a row") {
		t.Fatalf("quarantined: %d %s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "servers", "--config", cfg)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if !strings.Contains(r.Stdout, "broken") || !strings.Contains(r.Stdout, "quarantined") || !strings.Contains(r.Stdout, "MCP_SPAWN: cannot start") {
		t.Fatalf("servers: %s", r.Stdout)
	}
	r = clitest.RunSonde(t, "", "servers", "approve", "broken", "--config", cfg)
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "unchanged since its quarantine") {
		t.Fatalf("approve unchanged: %d %s", r.Code, r.Stderr)
	}
	// The configuration changes (an argument): approval lifts it.
	clitest.WriteTestFile(t, cfg, `{"mcpServers":{"broken":{"command":"`+missing+`","args":["--fixed"]}}}`)
	r = clitest.RunSonde(t, "", "call", "broken/x", "--config", cfg, "--all")
	if r.Code != cmdutil.ExitQuarantined || !strings.Contains(r.Stderr, "approve it to start it again") {
		t.Fatalf("changed, not approved: %d %s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "servers", "approve", "broken", "--config", cfg)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "sonde: server broken approved: it starts at its next use\n")
	r = clitest.RunSonde(t, "", "call", "broken/x", "--config", cfg, "--all")
	if r.Code != cmdutil.ExitSpawn {
		t.Fatalf("approved: %d %s", r.Code, r.Stderr)
	}
}

// TestToolsAllPeers: the fixture beside server-everything and
// server-memory (npm): every server's tools namespaced, echo in conflict
// between the fixture and server-everything, and a call routed to
// server-memory.
func TestToolsAllPeers(t *testing.T) {
	everything := peertest.Everything(t)
	memory := memoryServer(t)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	cfg, _ := hostServers(t, []string{"fixture"}, map[string]any{
		"everything": map[string]any{"command": everything},
		"memory":     map[string]any{"command": memory, "env": map[string]string{"MEMORY_FILE_PATH": memFile}},
	})
	r := clitest.RunSonde(t, "", "tools", "--config", cfg, "--all")
	if r.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{"fixture/echo", "conflict: also in everything", "everything/get-sum", "memory/create_entities", "memory/read_graph"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in\n%s", want, r.Stdout)
		}
	}
	r = clitest.RunSonde(t, "", "call", "memory/read_graph", "--config", cfg, "--all", "--json")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if !strings.Contains(r.Stdout, `"server":"memory"`) || !strings.Contains(r.Stdout, "entities") {
		t.Fatalf("memory/read_graph: %s", r.Stdout)
	}
}

// memoryServer is server-memory's executable: in interop/node_modules
// once `make peers` installs it, or where SONDE_PEER_MEMORY says.
func memoryServer(t *testing.T) string {
	if p := os.Getenv("SONDE_PEER_MEMORY"); p != "" {
		return p
	}
	return peertest.Need(t, filepath.Join("interop", "node_modules", ".bin", "mcp-server-memory"))
}

// TestCallOneServerUncertainAndFlood: with one server too, a call of a
// tool without a read-only hint whose server dies under it says its
// execution is uncertain; a notification flood past --flood-limit stops the server
// with MCP_FLOOD (exit 6), and --flood-limit 0 lets the same flood pass.
func TestCallOneServerUncertainAndFlood(t *testing.T) {
	f := clitest.NewFixture(t)
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "crash", "--json"})...)
	if r.Code != cmdutil.ExitExited || !strings.Contains(r.Stderr, "(execution uncertain: the tool is not read-only and may have run") || !strings.Contains(r.Stdout, `"uncertain":true`) {
		t.Fatalf("crash: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"x"}`, "--flood-limit", "100"}, "--fault", "notification-flood", "--flood-count", "3000")...)
	if r.Code != cmdutil.ExitProtocol || !strings.Contains(r.Stderr, "sonde: MCP_FLOOD: the server sent more than 100 notifications within one second (--flood-limit)") {
		t.Fatalf("flood: %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", f.Cmd([]string{"call", "echo", "--args", `{"value":"x"}`, "--flood-limit", "0"}, "--fault", "notification-flood", "--flood-count", "3000")...)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
}

// TestAllSkipsDisabled: --all leaves out a server its host turned off
// (saying so), --server still names it; --all and --server together are a
// usage error.
func TestAllSkipsDisabled(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	cfg, fx := hostServers(t, []string{"alpha"}, map[string]any{"off": map[string]any{"command": missing, "disabled": true}})
	r := clitest.RunSonde(t, "", "tools", "--config", cfg, "--all")
	if r.Code != cmdutil.ExitOK || !strings.Contains(r.Stderr, "sonde: skipping server off (Claude Desktop · user): disabled there (--server off starts it)") || !strings.Contains(r.Stdout, "alpha/echo") {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "tools", "--config", cfg, "--server", "alpha", "--server", "off")
	if r.Code != cmdutil.ExitSpawn || !strings.Contains(r.Stderr, "sonde: server off: MCP_SPAWN") {
		t.Fatalf("named: exit %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "tools", "--config", cfg, "--all", "--server", "alpha")
	clitest.CheckRun(t, r, cmdutil.ExitUsage, "sonde: give either --all or --server NAME (once or more), not both\n")
	fx["alpha"].AssertStarted(2)
}

// TestToolsAllOTLP: several servers at once export every server's session
// with --otlp-endpoint.
func TestToolsAllOTLP(t *testing.T) {
	col := otlptest.Start(t)
	cfg, _ := hostServers(t, []string{"alpha", "beta"}, nil)
	r := clitest.RunSonde(t, "", "tools", "--config", cfg, "--all", "--json", "--otlp-endpoint", col.URL)
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	lists := 0
	for _, s := range col.Spans() {
		if s.Name == "tools/list" {
			lists++
		}
	}
	if lists != 2 {
		t.Errorf("%d tools/list spans, want one per server (2)", lists)
	}
}

// TestCallFailureReport: a plain `sonde call TOOL -- CMD` that fails
// writes the failure report too (`sonde report`, and beside the capture
// with --record), without the secret passed as an argument; a server that
// does not start writes one of phase start.
func TestCallFailureReport(t *testing.T) {
	const secret = "sk-live-5ecret-0077"
	clitest.HostHome(t, t.TempDir(), t.TempDir())
	f := clitest.NewFixture(t)
	capFile := filepath.Join(t.TempDir(), "one.jsonl")
	r := clitest.RunSonde(t, "", f.Cmd([]string{"call", "fail", "--args", `{"message":"` + secret + `"}`, "--record", capFile})...)
	if r.Code != cmdutil.ExitRemote || strings.Contains(r.Stderr, "failure report") || !strings.Contains(r.Stderr, "\nsonde: MCP_ERROR: server error -32001: ") {
		t.Fatalf("call: %d\n%q (want the error, and the report written quietly)", r.Code, r.Stderr)
	}
	beside, err := os.ReadFile(strings.TrimSuffix(capFile, ".jsonl") + ".report.json")
	if err != nil {
		t.Fatal(err)
	}
	r = clitest.RunSonde(t, "", "report", "--json")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	for _, out := range []string{r.Stdout, string(beside)} {
		if strings.Contains(out, "5ecret") {
			t.Fatalf("the report leaks the argument:\n%s", out)
		}
		var rep manager.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if rep.Method != "tools/call" || rep.Tool != "fail" || rep.ID != "2" || rep.Phase != "call" || rep.Code != "MCP_ERROR" ||
			rep.RPCCode == nil || *rep.RPCCode != -32001 || rep.Hash == "" || !strings.HasPrefix(rep.Identity, "sonde-fixture ") ||
			rep.Protocol == "" || rep.Where != "command line" || rep.DurationMS <= 0 {
			t.Errorf("report: %+v", rep)
		}
	}

	missing := filepath.Join(t.TempDir(), "no-such-server")
	r = clitest.RunSonde(t, "", "call", "echo", "--args", `{"value":"`+secret+`"}`, "--", missing)
	if r.Code != cmdutil.ExitSpawn {
		t.Fatalf("call of a missing server: %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "report")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	for _, want := range []string{"no-such-server", "start", "initialize", "MCP_SPAWN"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("report of the failed start has no %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "5ecret") {
		t.Fatalf("the report leaks the argument:\n%s", r.Stdout)
	}
}

// TestCallFailureReportURL: the report of a failed call on a server named
// by --url names it without the URL's password.
func TestCallFailureReportURL(t *testing.T) {
	const password = "pw-5ecret-0078"
	clitest.HostHome(t, t.TempDir(), t.TempDir())
	r := clitest.RunSonde(t, "", "call", "echo", "--url", "http://user:"+password+"@127.0.0.1:1/mcp")
	if r.Code == cmdutil.ExitOK || r.Code == cmdutil.ExitUsage {
		t.Fatalf("call of an unreachable server: %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "report", "--json")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	if strings.Contains(r.Stdout, "5ecret") || !strings.Contains(r.Stdout, "127.0.0.1:1/mcp") {
		t.Fatalf("report (want the server's URL, without its password):\n%s", r.Stdout)
	}
}
