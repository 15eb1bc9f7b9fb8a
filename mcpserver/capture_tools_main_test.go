package mcpserver_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestMain lets the test binary run as sonde (and as the fixture server)
// when re-executed, and fails on leaked goroutines.
func TestMain(m *testing.M) { clitest.Main(m) }
