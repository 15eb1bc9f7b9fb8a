package tap_test

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
)

// profileEnv, set to a path prefix, makes each re-executed `sonde tap`
// write a CPU profile to PREFIX.PID (to profile the tap under a
// benchmark: SONDE_TEST_TAP_CPUPROFILE=/tmp/tap go test -bench ...).
const profileEnv = "SONDE_TEST_TAP_CPUPROFILE"

// TestMain runs sonde (and so the fixture and the tap) when the test binary
// was re-executed as it, and the tests otherwise, checking for leaked
// goroutines.
func TestMain(m *testing.M) { fixturetest.Main(m, profiled) }

// profiled is cli.Main, with a CPU profile of a tap when profileEnv is set;
// with goRelayArg first, it is BenchmarkTapFloor's Go relay instead.
func profiled(args []string, in io.Reader, out, errw io.Writer) int {
	if len(args) > 0 && args[0] == goRelayArg {
		return goRelay(args[1:])
	}
	if len(args) > 1 && args[0] == dialArg {
		return dialAs(args[1:], out)
	}
	prefix := os.Getenv(profileEnv)
	if prefix == "" || len(args) == 0 || args[0] != "tap" {
		return cli.Main(args, in, out, errw)
	}
	f, err := os.Create(fmt.Sprintf("%s.%d", prefix, os.Getpid()))
	if err != nil {
		fmt.Fprintln(errw, err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(errw, err)
		return 1
	}
	defer pprof.StopCPUProfile()
	return cli.Main(args, in, out, errw)
}
