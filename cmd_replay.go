package main

import "github.com/spf13/cobra"

// newReplayCmd is `sonde replay FILE`: the UI over a capture
// (runReplayTUI).
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
status 2. A capture whose last line was cut (sonde was killed) opens with a warning.

` + exitCodesHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("sonde replay takes one capture FILE (see sonde replay --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplayTUI(cmd.Context(), io, args[0], frames)
		},
	}
	cmd.Flags().IntVar(&frames, "frames", 20000, "frames kept in the Frames pane (older ones are evicted and counted)")
	return cmd
}
