package capfile

import (
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diagram"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// ExportOptions are the flags of `sonde export`.
type ExportOptions struct {
	Mermaid  bool
	Format   string // mermaid, text or otlp
	From, To string // the window's ends: a duration from the start, or an event number
	Width    int    // of the text swimlane, in cells
	// Traceparent parents the spans of --format otlp (otlp.go).
	Traceparent string
	Filter      string // --filter: the frames drawn
}

// NewCmdExport is `sonde export FILE`.
func NewCmdExport(env *cmdutil.Env) *cobra.Command {
	var o ExportOptions
	var from, to diagram.Bound // --from and --to, parsed
	cmd := &cobra.Command{
		Use:   "export [--mermaid | --format text | --format otlp] [--from X] [--to Y] FILE",
		Short: "Draw a capture as a sequence diagram (Mermaid, or plain text), or write its spans as OTLP JSON",
		Long: `Read a capture (--record FILE) and draw it as a sequence diagram: sonde and the server
as two lanes, an arrow per frame (requests labelled with their method and id, responses with
the id they resolve and their latency, or late/duplicate/unknown), notes where a response
overtook a request sent before it, where a request timed out or was cancelled, and where the
server started or exited. Lines that are not messages are crossed arrows.

  sonde export --mermaid bug.jsonl > bug.mmd          a Mermaid sequenceDiagram
  sonde export --format text bug.jsonl                the same swimlane in plain text
  sonde export --from 1.5s --to 3s bug.jsonl          a window, by time from the start
  sonde export --from 120 --to 180 bug.jsonl          a window, by event number (seq)
  sonde export --format otlp bug.jsonl > bug.otlp     the session's spans as OTLP JSON (docs/otel.md)

--from and --to each take a duration from the capture's start (1.5s, 250ms) or an event
number (120, or #120); both ends are included. Labels are escaped so Mermaid parses any
method name.

--format otlp writes the spans a live session sends with --otlp-endpoint (same names,
attributes and ids, the capture's timestamps) as OTLP JSON Lines: one
ExportTraceServiceRequest per line, each of which a collector's /v1/traces takes as is
(curl -H 'Content-Type: application/json' --data-binary @LINE); --traceparent makes them
children of a span of yours. --from/--to do not apply.

Exit status: 0, 2 for a bad flag or a file that cannot be read as a capture.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("export takes one capture FILE (see sonde export --help)")
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			switch {
			case o.Mermaid && cmd.Flags().Changed("format") && o.Format != "mermaid":
				return cmdutil.Usagef("--mermaid and --format " + o.Format + " disagree: give one")
			case o.Format != "mermaid" && o.Format != "text" && o.Format != "otlp":
				return cmdutil.Usagef("--format is mermaid, text or otlp, not " + o.Format)
			case o.Width < 40:
				return cmdutil.Usagef("--width must be at least 40")
			case o.Format == "otlp" && o.Filter != "":
				return cmdutil.Usagef("--filter draws a diagram's frames; --format otlp writes every span")
			}
			if from, err = diagram.ParseBound(o.From); err != nil {
				return cmdutil.Usagef("--from: " + err.Error())
			}
			if to, err = diagram.ParseBound(o.To); err != nil {
				return cmdutil.Usagef("--to: " + err.Error())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Format == "otlp" {
				return exportOTLP(env, args[0], o.Traceparent)
			}
			return runExport(env, &o, args[0], from, to)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.Mermaid, "mermaid", false, "write a Mermaid sequenceDiagram (the default)")
	fs.StringVar(&o.Format, "format", "mermaid", "mermaid, text (a plain-text swimlane for the terminal) or otlp (OTLP JSON spans)")
	fs.StringVar(&o.From, "from", "", "start of the window: a duration from the start (1.5s) or an event number (120)")
	fs.StringVar(&o.To, "to", "", "end of the window (included), as --from")
	fs.IntVar(&o.Width, "width", 100, "width of the text swimlane in cells")
	fs.StringVar(&o.Traceparent, "traceparent", "", "with --format otlp: the W3C traceparent the spans are children of (the --traceparent the session ran with: a capture does not keep it)")
	addFilterFlag(cmd, &o.Filter)
	return cmd
}

// runExport draws the capture at path, within the window from..to.
func runExport(env *cmdutil.Env, o *ExportOptions, path string, from, to diagram.Bound) error {
	keep, err := eventFilter(path, o.Filter)
	if err != nil {
		return err
	}
	var b *diagram.Builder
	_, warnings, err := eachEvent(path, func(h capture.Header) {
		b = diagram.New(diagram.Options{Start: h.Start, From: from, To: to})
	}, func(ev client.Event) {
		if keep(ev) {
			b.Add(ev)
		}
	})
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	if o.Format == "text" {
		return b.Text(env.Out, o.Width)
	}
	return b.Mermaid(env.Out)
}
