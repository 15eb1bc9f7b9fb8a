package ui

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/sonde-mcp/sonde/fixtures"
)

// fixtureEnv makes the re-executed test binary act as the fixture server
// (the tests that need a real server: urlrequired_test.go).
const fixtureEnv = "SONDE_UI_FIXTURE"

// TestMain fails the package when a test leaves a goroutine behind (a
// command run by a test, or a client that was not closed).
func TestMain(m *testing.M) {
	if os.Getenv(fixtureEnv) == "1" {
		os.Exit(fixtures.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}
