package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func newReplayCmd(io streams) *cobra.Command {
	var frames int
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Open a capture in the interactive UI, read-only, with a timeline",
		Long: `replay opens a capture written by --record (or R in the UI) in the interactive UI,
read-only: no server is started and nothing is sent. The panes show the session as it
was at the cursor: the pending map with the ages and deadlines of that moment, the
frames, stderr and the tool list. The replay opens at the end of the capture, paused.

  space        play / pause            + / -    speed (0.25x to 20x, then instant)
  ← / ,        step one event back     → / .    step one event forward
  < / >        start / end             t        jump to a time (1.5s, 2m, #N for event N)
  e / E        next / previous error or protocol violation
  i            next frame of an id (the Pending pane's selection, or type one)

A file that is not a capture (or is missing) fails before the UI opens, with exit
status 12. A capture whose last line was cut (sonde was killed) opens with a warning.

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("sonde replay takes one capture FILE (see sonde replay --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), io, args[0], frames)
		},
	}
	cmd.Flags().IntVar(&frames, "frames", 20000, "frames kept in the Frames pane (older ones are evicted and counted)")
	return cmd
}

// runReplay opens the capture (indexing it) and runs the UI over it.
func runReplay(ctx context.Context, io streams, path string, frames int) error {
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		return &exitStatus{code: exitCapture, msg: captureError(path, err)}
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
