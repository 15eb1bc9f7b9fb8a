package ui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// command run by a test, or a client that was not closed).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
