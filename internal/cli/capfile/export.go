package capfile

import (
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diagram"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// NewCmdExport is `sonde export FILE`.
func NewCmdExport(env *cmdutil.Env) *cobra.Command {
	var (
		mermaid    bool
		form       string
		from, to   string
		width      int
		fromB, toB diagram.Bound
	)
	cmd := &cobra.Command{
		Use:   "export [--mermaid | --format text] [--from X] [--to Y] FILE",
		Short: "Draw a capture as a sequence diagram (Mermaid, or plain text)",
		Long: `Read a capture (--record FILE) and draw it as a sequence diagram: sonde and the server
as two lanes, an arrow per frame (requests labelled with their method and id, responses with
the id they resolve and their latency, or late/duplicate/unknown), notes where a response
overtook a request sent before it, where a request timed out or was cancelled, and where the
server started or exited. Lines that are not messages are crossed arrows.

  sonde export --mermaid bug.jsonl > bug.mmd          a Mermaid sequenceDiagram
  sonde export --format text bug.jsonl                the same swimlane in plain text
  sonde export --from 1.5s --to 3s bug.jsonl          a window, by time from the start
  sonde export --from 120 --to 180 bug.jsonl          a window, by event number (seq)

--from and --to each take a duration from the capture's start (1.5s, 250ms) or an event
number (120, or #120); both ends are included. Labels are escaped so Mermaid parses any
method name.

Exit status: 0, 2 for a bad flag or a file that cannot be read as a capture.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("export takes one capture FILE (see sonde export --help)")
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			switch {
			case mermaid && cmd.Flags().Changed("format") && form != "mermaid":
				return cmdutil.Usagef("--mermaid and --format " + form + " disagree: give one")
			case form != "mermaid" && form != "text":
				return cmdutil.Usagef("--format is mermaid or text, not " + form)
			case width < 40:
				return cmdutil.Usagef("--width must be at least 40")
			}
			if fromB, err = diagram.ParseBound(from); err != nil {
				return cmdutil.Usagef("--from: " + err.Error())
			}
			if toB, err = diagram.ParseBound(to); err != nil {
				return cmdutil.Usagef("--to: " + err.Error())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var b *diagram.Builder
			_, warnings, err := eachEvent(args[0], func(h capture.Header) {
				b = diagram.New(diagram.Options{Start: h.Start, From: fromB, To: toB})
			}, func(ev client.Event) { b.Add(ev) })
			if err != nil {
				return err
			}
			warnCapture(env, args[0], warnings)
			if form == "text" {
				return b.Text(env.Out, width)
			}
			return b.Mermaid(env.Out)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&mermaid, "mermaid", false, "write a Mermaid sequenceDiagram (the default)")
	fs.StringVar(&form, "format", "mermaid", "mermaid, or text: a plain-text swimlane for the terminal")
	fs.StringVar(&from, "from", "", "start of the window: a duration from the start (1.5s) or an event number (120)")
	fs.StringVar(&to, "to", "", "end of the window (included), as --from")
	fs.IntVar(&width, "width", 100, "width of the text swimlane in cells")
	return cmd
}
