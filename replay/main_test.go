package replay_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestMain runs the tests under goleak, or the fixture server when the
// binary was re-executed as one (capturetest.Record).
func TestMain(m *testing.M) { capturetest.Main(m) }
