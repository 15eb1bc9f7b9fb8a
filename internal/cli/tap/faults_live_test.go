package tap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestFaultsLiveToggle: sonde faults lists the rules of a live tap, turns
// a drop rule off (the host's next call is answered) and on again (the
// next is dropped); the recording notes both changes; the tap refuses
// sonde inject (fault rules on) as a usage error; an unknown rule number
// is one too.
func TestFaultsLiveToggle(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", "chaos", "--fault", "drop:to-host,tool=echo", "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.write(initialized)

	h.write(echoCall(2, "dropped", 0), `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	h.await(`"id":3`, 1)
	r := clitest.RunSonde(t, "", "faults", "--json")
	clitest.CheckRun(t, r, 0, "")
	var st struct {
		Rules []struct {
			Rule    int    `json:"rule"`
			Text    string `json:"text"`
			Enabled bool   `json:"enabled"`
			Fired   int    `json:"fired"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &st); err != nil || len(st.Rules) != 1 || st.Rules[0].Text != "drop:to-host,tool=echo" || !st.Rules[0].Enabled || st.Rules[0].Fired != 1 {
		t.Fatalf("sonde faults --json: %v\n%s", err, r.Stdout)
	}

	clitest.CheckRun(t, clitest.RunSonde(t, "", "faults", "off", "1"), 0, "")
	h.write(echoCall(4, "through", 0))
	h.await(`"value":"through"`, 1)
	r = clitest.RunSonde(t, "", "faults")
	clitest.CheckRun(t, r, 0, "")
	if !strings.Contains(r.Stdout, "1     off") || !strings.Contains(r.Stdout, "drop:to-host,tool=echo") {
		t.Errorf("sonde faults:\n%s", r.Stdout)
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "faults", "on", "1"), 0, "")
	h.write(echoCall(5, "dropped again", 0), `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	h.await(`"id":6`, 1)

	if r := clitest.RunSonde(t, "", "faults", "off", "9"); r.Code != 2 || !strings.Contains(r.Stderr, "no such fault rule: 9") {
		t.Errorf("rule 9: exit %d\n%s", r.Code, r.Stderr)
	}
	if r := clitest.RunSonde(t, "", "inject", "ping"); r.Code != 2 || !strings.Contains(r.Stderr, "takes no injected requests") {
		t.Errorf("inject with fault rules: exit %d\n%s", r.Code, r.Stderr)
	}
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	if out := h.stdoutText(); strings.Contains(out, `"dropped`) || !strings.Contains(out, `"through"`) {
		t.Errorf("the host got:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "chaos-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	n := notes(t, files[0])
	for _, want := range []string{"fault rule 1: drop:to-host,tool=echo turned off by a watcher", "fault rule 1: drop:to-host,tool=echo turned on by a watcher"} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
}
