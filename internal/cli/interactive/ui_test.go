package interactive_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// The interactive UI reports a server that cannot start like every other
// command, before it takes the terminal.
func TestTUISpawnFailure(t *testing.T) {
	r := clitest.RunSonde(t, "", "--", "sonde-no-such-server-xyz")
	clitest.CheckRun(t, r, cmdutil.ExitSpawn, `sonde: MCP_SPAWN: cannot start "sonde-no-such-server-xyz": executable not found (check the path or PATH)`+"\n")
}
