package doctor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/otlptest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// result is one line of doctor --json.
type result struct {
	Server, Host, Transport, Failed string
	OK                              bool
	MS                              float64
	Steps                           []struct {
		Name, Detail, Hint string
		OK                 bool
		MS                 *float64
	}
}

// decode reads the --json lines by server.
func decode(t *testing.T, out string) map[string]result {
	t.Helper()
	got := map[string]result{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("doctor --json line %q: %v", line, err)
		}
		got[r.Server] = r
	}
	return got
}

// entry is a stdio server entry of a config file.
func entry(argv []string, env []string) map[string]any {
	e := map[string]any{"command": argv[0], "args": argv[1:]}
	if len(env) > 0 {
		m := map[string]string{}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		e["env"] = m
	}
	return e
}

// writeConfig writes a Claude Desktop-shaped file with servers into a
// temporary home (HOME and the working directory point there, so that no
// file of the machine is read) and returns its path.
func writeConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	home := t.TempDir()
	clitest.HostHome(t, home, home)
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "servers.json")
	clitest.WriteTestFile(t, path, string(b))
	return path
}

// TestDoctor checks a config listing a healthy fixture and broken servers
// of each kind: each fails at its own step with a hint; the healthy one
// passes every step; the exit status is 1.
func TestDoctor(t *testing.T) {
	fx := clitest.NewFixture(t)
	authURL := clitest.FixtureHTTP(t, "--fault", "http-unauthorized") + "/mcp"
	servers := map[string]any{
		"healthy": entry(fx.Argv(), clitest.ChildEnv()),
		"missing": entry([]string{"sonde-no-such-command-xyz"}, nil),
		"noinit":  entry(fx.Argv("--fault", "no-initialize-response"), clitest.ChildEnv()),
		"noise":   entry(fx.Argv("--fault", "stdout-noise"), clitest.ChildEnv()),
		"stays":   entry(fx.Argv("--fault", "ignore-sigterm"), clitest.ChildEnv()),
		"unset":   entry([]string{"sonde-x"}, []string{"TOKEN=${env:SONDE_DOCTOR_UNSET}"}),
		"refused": map[string]any{"url": "http://" + peertest.FreeAddr(t) + "/mcp"},
		"auth":    map[string]any{"url": authURL},
		"nodns":   map[string]any{"url": "http://sonde-doctor.invalid/mcp"},
	}
	if runtime.GOOS != "windows" {
		servers["crash"] = entry([]string{"sh", "-c", "echo boom >&2; exit 3"}, nil)
	}
	path := writeConfig(t, servers)
	os.Unsetenv("SONDE_DOCTOR_UNSET")

	// 5 s: with 1 s, the initialize of two servers that should have failed
	// later (stays, auth) timed out on a loaded machine. The shutdown's
	// grace is then its own 2 s, not the timeout.
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--timeout", "5s")
	clitest.CheckRun(t, r, 1, "sonde: doctor: ...")
	got := decode(t, r.Stdout)
	want := map[string]failure{
		"missing": {"command", "sonde-no-such-command-xyz is not found on the server's PATH", "full path"},
		"noinit":  {"initialize", "no answer to initialize within 5s", "did not answer"},
		"noise":   {"stdout", `"fixture noise: this is not JSON"`, "stderr"},
		"unset":   {"config", "SONDE_DOCTOR_UNSET is not set", "export the variable"},
		"refused": {"tcp", "connection refused", "nothing accepts connections"},
		"auth":    {"authorization", "HTTP 401", "--oauth"},
		"stays":   {"shutdown", "the server did not exit within 2s of its stdin closing: sonde sent ", "must exit when its stdin closes"},
		"nodns":   {"dns", "cannot resolve sonde-doctor.invalid", "host name"},
		"crash":   {"initialize", "exited with exit code 3 before answering initialize; its stderr: boom", "stderr"},
	}
	if runtime.GOOS == "windows" {
		delete(want, "crash")
		want["refused"] = failure{"tcp", "", "nothing accepts connections"}
	}
	expectFailures(t, r.Stdout, got, want)
	h := got["healthy"]
	if !h.OK || h.Failed != "" {
		t.Fatalf("healthy: %+v", h)
	}
	var names []string
	for _, st := range h.Steps {
		names = append(names, st.Name)
		if st.MS == nil {
			t.Errorf("healthy: step %s has no ms", st.Name)
		}
	}
	if got, want := strings.Join(names, " "), "config command spawn stdout stderr initialize protocol capabilities tools/list tool schemas ping lint shutdown"; got != want {
		t.Errorf("healthy steps: %s\nwant %s", got, want)
	}
	// The crash's stderr is shown in its stderr step too.
	if c, ok := got["crash"]; ok {
		for _, st := range c.Steps {
			if st.Name == "stderr" && st.Detail != "boom" {
				t.Errorf("crash: stderr step %q, want boom", st.Detail)
			}
		}
	}
}

// TestDoctorTable: the human form, a summary table and each failure's
// cause and hint; exit 0 when every server passes; nothing on stderr (no
// terminal, so no progress display).
func TestDoctorTable(t *testing.T) {
	fx := clitest.NewFixture(t)
	path := writeConfig(t, map[string]any{
		"healthy": entry(fx.Argv(), clitest.ChildEnv()),
		"missing": entry([]string{"sonde-no-such-command-xyz"}, nil),
	})
	r := clitest.RunSonde(t, "", "doctor", "--config", path)
	clitest.CheckRun(t, r, 1, "sonde: doctor: 1 of 2 servers failed\n")
	clitest.CheckOrder(t, r.Stdout, []string{
		`SERVER +HOST +RESULT +FAILING STEP +TIME\n`,
		`healthy +file +ok +- +\S+\n`,
		`missing +file +FAIL +command +\S+\n`,
		`\nmissing \(file, .*servers.json\): command failed: sonde-no-such-command-xyz is not found on the server's PATH`,
		`\n  hint: give the full path of the command`,
	})

	r = clitest.RunSonde(t, "", "doctor", "--config", path, "--server", "healthy")
	clitest.CheckRun(t, r, 0, "")
	if strings.Contains(r.Stdout, "missing") {
		t.Errorf("--server healthy checks missing too:\n%s", r.Stdout)
	}

	r = clitest.RunSonde(t, "", "doctor", "--config", path, "--server", "nope")
	clitest.CheckRun(t, r, 2, "sonde: --server nope: no such server in the files read (see sonde config list)\n")
}

// TestDoctorDiscovery: without --config, the hosts' files are read as
// sonde config list reads them; --host narrows them.
func TestDoctorDiscovery(t *testing.T) {
	fx := clitest.NewFixture(t)
	home := t.TempDir()
	clitest.HostHome(t, home, home)
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"cursor-fixture": entry(fx.Argv(), clitest.ChildEnv())}})
	clitest.WriteTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), string(b))

	r := clitest.RunSonde(t, "", "doctor", "--json")
	clitest.CheckRun(t, r, 0, "")
	got := decode(t, r.Stdout)
	if res := got["cursor-fixture"]; !res.OK || res.Host != "Cursor" {
		t.Errorf("discovered: %+v\n%s", got, r.Stdout)
	}

	// A broken file of another host is reported after the servers, and
	// fails the run.
	claude := filepath.Join(home, ".claude.json")
	clitest.WriteTestFile(t, claude, "{not json")
	r = clitest.RunSonde(t, "", "doctor")
	clitest.CheckRun(t, r, 1, "sonde: doctor: a config file has a problem\n")
	clitest.CheckOrder(t, r.Stdout, []string{`cursor-fixture +Cursor +ok`, "\nFiles with problems \\(their servers are not checked\\):\n  " + regexp.QuoteMeta(claude) + ": not valid JSON"})
	r = clitest.RunSonde(t, "", "doctor", "--json")
	clitest.CheckRun(t, r, 1, "sonde: doctor: a config file has a problem\n")
	if !strings.Contains(r.Stdout, `{"file":`+strconv.Quote(claude)+`,"ok":false,"problem":`) {
		t.Errorf("--json lacks the file problem:\n%s", r.Stdout)
	}
	os.Remove(claude)
	r = clitest.RunSonde(t, "", "doctor", "--host", "vscode")
	clitest.CheckRun(t, r, 2, "sonde: no servers found in the hosts' config files (see sonde config list)\n")
}

// failure is the step a server is expected to fail, with words of its
// detail and its hint.
type failure struct{ step, detail, hint string }

// expectFailures checks that each server of want failed at its step, and
// at that step only.
func expectFailures(t *testing.T, out string, got map[string]result, want map[string]failure) {
	t.Helper()
	for name, w := range want {
		res, ok := got[name]
		if !ok {
			t.Errorf("no result for %s:\n%s", name, out)
			continue
		}
		if res.OK || res.Failed != w.step {
			t.Errorf("%s: ok %v, failed at %q, want a failure at %q\n%+v", name, res.OK, res.Failed, w.step, res.Steps)
			continue
		}
		last := res.Steps[len(res.Steps)-1]
		if last.Name != w.step || last.OK || !strings.Contains(last.Detail, w.detail) || !strings.Contains(last.Hint, w.hint) {
			t.Errorf("%s: last step %+v, want %s failing with %q and a hint with %q", name, last, w.step, w.detail, w.hint)
		}
		for _, st := range res.Steps[:len(res.Steps)-1] {
			if !st.OK {
				t.Errorf("%s: step %s failed before the last", name, st.Name)
			}
		}
	}
}

// TestDoctorToolsAndLeftovers: a server whose tool schemas are broken fails
// at the tool schemas step, naming the tool; one that leaves a process of
// its group running when it exits fails at shutdown, naming it.
func TestDoctorToolsAndLeftovers(t *testing.T) {
	fx := clitest.NewFixture(t)
	servers := map[string]any{
		"schemas": entry(fx.Argv("--fault", "invalid-schema"), clitest.ChildEnv()),
		"leaves":  entry(fx.Argv("--fault", "grandchild-holds-stdout"), clitest.ChildEnv()),
	}
	r := clitest.RunSonde(t, "", "doctor", "--config", writeConfig(t, servers), "--json", "--timeout", "20s")
	clitest.CheckRun(t, r, 1, "sonde: doctor: ...")
	want := map[string]failure{
		"schemas": {"tool schemas", `2 schema problem(s): bad-schema: inputSchema is not a valid JSON Schema: at '/properties/x/type'`, "valid JSON Schema of type object"},
		"leaves":  {"shutdown", "the server exited (exit code 0) but left 1 process: pid ", "must end what it started"},
	}
	if runtime.GOOS == "windows" {
		delete(want, "leaves") // the job object ends them; sonde does not list them there
	}
	expectFailures(t, r.Stdout, decode(t, r.Stdout), want)
}

// TestDoctorOTLP: with --otlp-endpoint, each server's checked session is
// exported as the other commands export theirs; --otlp-content is refused.
func TestDoctorOTLP(t *testing.T) {
	col := otlptest.Start(t)
	fx := clitest.NewFixture(t)
	cfg := writeConfig(t, map[string]any{"fx": entry(fx.Argv(), clitest.ChildEnv())})
	r := clitest.RunSonde(t, "", "doctor", "--config", cfg, "--json", "--otlp-endpoint", col.URL)
	clitest.CheckRun(t, r, 0, "")
	for _, name := range []string{"initialize", "tools/list", "ping"} {
		if col.Span(name) == nil {
			t.Errorf("no span %s among %d", name, len(col.Spans()))
		}
	}
	r = clitest.RunSonde(t, "", "doctor", "--config", cfg, "--otlp-endpoint", col.URL, "--otlp-content")
	clitest.CheckRun(t, r, cmdutil.ExitUsage, "sonde: --otlp-content is not taken by doctor\n")
}
