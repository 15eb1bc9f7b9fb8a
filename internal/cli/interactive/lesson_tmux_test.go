package interactive_test

import (
	"fmt"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTUILessonSizes reads the first lesson steps at 80x24 and 120x36: at
// each step its next action ("Press space…") is on the screen, above the
// footer, however little room the narration has.
func TestTUILessonSizes(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := clitest.NewFixture(t)
			tt := startTUI(t, size[0], size[1], f.Cmd([]string{"demo", "--slow", "300ms"}))
			// The lesson drives the client once the handshake is done.
			tt.waitFor("step 1", append([]string{`Lesson 1/13`, `Press space to send two calls at once`, `space: next step`}, handshake...)...)
			tt.keys("Space")
			tt.waitFor("step 2", `Lesson 2/13`, `Press space once slow`, `space: next step`)
			// The FIFO view counts every request, not the rows that fit:
			// both calls get the other's answer (the view follows the
			// answers as they arrive).
			tt.keys("o")
			tt.waitFor("the FIFO count", `Lesson 2/13: two calls in flight · FIFO view`, `[^0-9]2 wrong answers: sonde matched every one by id`)
			tt.keys("o")
			tt.waitFor("the narration again", `Press space once slow`)
			tt.keys("Space")
			tt.waitFor("step 3", `Lesson 3/13`, `Next: the same on real traffic`, `space: next step`)
			tt.keys("Space")
			tt.waitFor("step 4", `Lesson 4/13`, `Next: a call that times out\. Press space`, `space: next step`)
			tt.quit()
		})
	}
}
