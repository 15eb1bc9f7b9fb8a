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

// TestDoctorRuntime: npx is found on the PATH the server gets (the entry's
// env sets it), and then node must be there too: its version is shown,
// and without it the runtime step fails with the hint to install Node.js.
func TestDoctorRuntime(t *testing.T) {
	withNode, without := t.TempDir(), t.TempDir()
	for _, d := range []string{withNode, without} {
		clitest.WriteTestFile(t, filepath.Join(d, "npx"), "#!/bin/sh\nexit 1\n")
		os.Chmod(filepath.Join(d, "npx"), 0o755)
	}
	clitest.WriteTestFile(t, filepath.Join(withNode, "node"), "#!/bin/sh\necho v22.1.0\n")
	os.Chmod(filepath.Join(withNode, "node"), 0o755)
	path := writeConfig(t, map[string]any{
		"with":    entry([]string{"npx", "-y", "some-server"}, []string{"PATH=" + withNode}),
		"without": entry([]string{"npx", "-y", "some-server"}, []string{"PATH=" + without}),
	})
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json")
	clitest.CheckRun(t, r, 1, "sonde: doctor: 2 of 2 servers failed\n")
	got := decode(t, r.Stdout)
	w := got["with"]
	if len(w.Steps) < 3 || w.Steps[2].Name != "runtime" || !w.Steps[2].OK || w.Steps[2].Detail != "node v22.1.0" {
		t.Errorf("with node: %+v", w.Steps)
	}
	wo := got["without"]
	if last := wo.Steps[len(wo.Steps)-1]; wo.Failed != "runtime" || !strings.Contains(last.Detail, "the runtime is missing: node is not found on the server's PATH ("+without+")") || !strings.Contains(last.Hint, "install Node.js") {
		t.Errorf("without node: failed at %q: %+v", wo.Failed, last)
	}
}
