package har_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestMain runs the fixture server when the test binary was re-executed as
// it, and the tests otherwise.
func TestMain(m *testing.M) { capturetest.Main(m) }
