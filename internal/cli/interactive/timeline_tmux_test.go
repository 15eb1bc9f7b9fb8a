package interactive_test

import (
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUITimeline: key 7 shows the Timeline in the place of Frames: the
// handshake's requests as spans under the axis, the latency summary; ]
// zooms in, h pauses, f follows again; 2 brings Frames back.
func TestTUITimeline(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 36, f.Cmd(nil))
	tt.waitFor("the handshake", handshake...)
	tt.keys("7")
	tt.waitFor("the timeline", `─ 7 Timeline 10s ─`, `!─ 2 Frames `, `│1 initialize\s+━`, `│2 tools/list\s+━`,
		`-10s─+-5s─+now`, `latency in this window\s+n\s+p50\s+p95\s+p99`)
	tt.keys("]")
	tt.waitFor("zoomed in", `─ 7 Timeline 5s ─`)
	tt.keys("h")
	tt.waitFor("paused", `─ 7 Timeline 5s · paused \(f follows now\) ─`)
	tt.keys("f")
	tt.waitFor("following", `─ 7 Timeline 5s ─`)
	tt.keys("2")
	tt.waitFor("Frames back", `─ 2 Frames `, `!─ 7 Timeline`)
	tt.quit()
}
