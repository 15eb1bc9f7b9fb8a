package doctor_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestDoctorEverything: the reference server (server-everything, from
// npm; installed by make peers) passes every step over stdio.
func TestDoctorEverything(t *testing.T) {
	bin := peertest.Everything(t)
	path := writeConfig(t, map[string]any{"everything": entry([]string{bin}, nil)})
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--timeout", clitest.SlowTimeout)
	got := decode(t, r.Stdout)
	if res := got["everything"]; r.Code != 0 || !res.OK {
		t.Errorf("exit %d: %s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
