package interactive

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/report"
	"github.com/sonde-mcp/sonde/ui"
)

// RunReplay is `sonde replay FILE`: it opens the capture (indexing it) and
// runs the UI over it, keeping frames frames in the Frames pane.
func RunReplay(ctx context.Context, env *cmdutil.Env, path string, frames int) error {
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		return cmdutil.Usagef(captureError(path, err)) // like lint's: exit status 2
	}
	defer tl.Close()
	palette, noColor := termPalette()
	m := ui.New(ui.Options{Replay: tl, Palette: palette, NoColor: noColor, FrameCapacity: frames, Command: path,
		Export: report.Beside(cmdutil.Version), Capture: path})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
	_, err = p.Run()
	return interrupted(err)
}

// captureError names the file and says why it cannot be replayed.
func captureError(path string, err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("capture %s: no such file", path)
	}
	return fmt.Sprintf("capture %s: %v", path, err)
}
