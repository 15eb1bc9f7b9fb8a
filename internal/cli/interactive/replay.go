package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// runReplayTUI opens the capture (indexing it) and runs the UI over it.
func runReplayTUI(ctx context.Context, io streams, path string, frames int) error {
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		return usagef(captureError(path, err)) // like lint's: exit status 2
	}
	defer tl.Close()
	noColor := os.Getenv("NO_COLOR") != ""
	palette := theme.Dark()
	if noColor {
		palette = theme.NoColor()
	}
	m := ui.New(ui.Options{Replay: tl, Palette: palette, NoColor: noColor, FrameCapacity: frames, Command: path})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(io.in), tea.WithOutput(io.out))
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return &exitStatus{code: exitInterrupted, msg: "interrupted"}
	}
	return err
}

// captureError names the file and says why it cannot be replayed.
func captureError(path string, err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("capture %s: no such file", path)
	}
	return fmt.Sprintf("capture %s: %v", path, err)
}
