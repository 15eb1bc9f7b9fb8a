package mcpserver_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestMain lets the test binary run as sonde (sonde mcp, sonde tap) and as
// the fixture server when re-executed, and fails the package on leaked
// goroutines (fixturetest.Main's goleak.VerifyTestMain). It is the
// package's one TestMain, internal and external tests alike: it lives in
// the external package because clitest imports the command line, which
// imports mcpserver.
func TestMain(m *testing.M) { clitest.Main(m) }
