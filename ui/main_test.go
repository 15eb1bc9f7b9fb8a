package ui

import (
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// command run by a test, or a client that was not closed), and runs the
// fixture server when the test binary is re-executed as one (the tests
// that need a real server: capturetest.Stdio).
func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }
