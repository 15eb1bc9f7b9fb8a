//go:build !windows

package doctor_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestDoctorParallel: the servers are checked at the same time. Each one
// logs its start, then waits until all have started before it exits (with
// code 3, before answering): checked one after the other, the first would
// wait until its timeout. With --jobs 1 they run one at a time: the log
// alternates.
func TestDoctorParallel(t *testing.T) {
	const n = 4
	log := filepath.Join(t.TempDir(), "log")
	script := fmt.Sprintf(`echo start >> %[1]s; while [ "$(grep -c start %[1]s)" -lt %[2]d ]; do sleep 0.02; done; echo end >> %[1]s; exit 3`, log, n)
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = entry([]string{"sh", "-c", script}, nil)
	}
	path := writeConfig(t, servers)
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--jobs", fmt.Sprint(n), "--timeout", "20s")
	clitest.CheckRun(t, r, 1, "sonde: doctor: 4 of 4 servers failed\n")
	for name, res := range decode(t, r.Stdout) {
		last := res.Steps[len(res.Steps)-1]
		if res.Failed != "initialize" || !strings.Contains(last.Detail, "exited with exit code 3") {
			t.Errorf("%s: %+v", name, last)
		}
	}
	b, _ := os.ReadFile(log)
	if got, want := string(b), strings.Repeat("start\n", n)+strings.Repeat("end\n", n); got != want {
		t.Errorf("log:\n%s\nwant every start before the first end", got)
	}

	// One at a time: a server that waits for the others would time out, so
	// these ones do not wait.
	os.Remove(log)
	script = fmt.Sprintf(`echo start >> %[1]s; sleep 0.05; echo end >> %[1]s; exit 3`, log)
	for i := range n {
		servers[fmt.Sprintf("s%d", i)] = entry([]string{"sh", "-c", script}, nil)
	}
	path = writeConfig(t, servers)
	r = clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--jobs", "1")
	clitest.CheckRun(t, r, 1, "sonde: doctor: 4 of 4 servers failed\n")
	b, _ = os.ReadFile(log)
	if got, want := string(b), strings.Repeat("start\nend\n", n); got != want {
		t.Errorf("--jobs 1 log:\n%s\nwant one server at a time", got)
	}
}
