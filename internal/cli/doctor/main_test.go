package doctor_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestMain runs sonde (and so, with the "fixture" subcommand, the fixture
// server) when the test binary was re-executed as it, and the tests
// otherwise, checking for leaked goroutines.
func TestMain(m *testing.M) { clitest.Main(m) }
