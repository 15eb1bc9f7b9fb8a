package ui

import (
	"testing"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
)

// fixtureEnv makes the re-executed test binary act as the fixture server
// (the tests that need a real server: urlrequired_test.go).
const fixtureEnv = fixturetest.Env

// TestMain fails the package when a test leaves a goroutine behind (a
// command run by a test, or a client that was not closed).
func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }
