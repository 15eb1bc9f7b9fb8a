package interactive_test

import (
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestTUIReplay opens the sample capture in `sonde replay` in a real
// terminal: it opens at the end, paused; steps back to the moment call 5
// was in flight (the Pending pane shows it with its age and deadline then);
// seeks to 0.2s, when 3 had been answered before 2, still pending; steps
// forward and back; plays from the start to the end; then quits with
// status 0 and nothing on stderr.
func TestTUIReplay(t *testing.T) {
	path, err := filepath.Abs(filepath.Join(peertest.Root(), "testdata", "captures", "out-of-order-late-crash.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tt := startTUI(t, 120, 40, []string{"replay", path})
	tt.waitFor("the end of the capture",
		`sonde replay │ ⏸ paused 1x │ \+365\.2ms / 365\.2ms │ event 36/36 │ pending 0 │ sonde-fixture 0\.1\.0`,
		`─ 1 Pending 0 · 5 settled `, `─ 4 stderr 78B · exit code 3 `, `── pid 5617 exited: exit code 3 `,
		`space play/pause`)

	// Five steps back: call 5 is in flight, sent 0µs before the cursor,
	// 4.9s before its deadline; the process has not exited yet.
	tt.keys("Left", "Left", "Left", "Left", "Left")
	tt.waitFor("call 5 in flight at event 31",
		`event 31/36 │ pending 1 `, `─ 1 Pending 1 · 4 settled `,
		`│\s*5\s+tools/call crash\s+sent\s+0µs\s+4\.9s`, `!exited: exit code 3`)

	// Seek to 0.2s, the out-of-order moment: 3 was answered first, 2 is
	// still pending (its age as it was at 0.2s).
	tt.keys("t")
	tt.waitFor("the time prompt", `time> `)
	tt.text("0.2")
	tt.keys("Enter")
	tt.waitFor("the moment 3 was answered before 2",
		`event 17/36 │ pending 1 `, `│\s*2\s+tools/call echo\s+sent\s+46\.0ms\s+4\.9s`, `│\s*3\s+tools/call echo\s+resolved\s+1\.2`, `\+200\.0ms / 365\.2ms`)

	// One step forward and back again: the same moment.
	tt.keys("Right")
	tt.waitFor("one step forward", `event 18/36 `)
	tt.keys("Left")
	tt.waitFor("back", `event 17/36 │ pending 1 `, `│\s*2\s+tools/call echo\s+sent\s+34\.0ms`)

	// Play from the start at 0.25x: it ends at the end of the capture, paused.
	tt.keys("<", "-", "-")
	tt.waitFor("the start at 0.25x", `⏸ paused 0\.25x │ \+0µs / 365\.2ms │ event 0/36 `)
	tt.keys("Space")
	tt.waitFor("the end of playback", `⏸ paused 0\.25x │ \+365\.2ms / 365\.2ms │ event 36/36 `, `── pid 5617 exited: exit code 3 `)
	tt.quit()
}
