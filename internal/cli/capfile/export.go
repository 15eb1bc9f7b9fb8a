package capfile

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diagram"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// ExportOptions are the flags of `sonde export`.
type ExportOptions struct {
	Mermaid  bool
	Format   string // mermaid, text, otlp, html or har
	From, To string // the window's ends: a duration from the start, or an event number
	Width    int    // of the text swimlane, in cells
	// Traceparent parents the spans of --format otlp (otlp.go).
	Traceparent string
	Filter      string // --filter: the frames drawn
	Out         string // -o: the file html and har go to ("" for stdout)
}

// NewCmdExport is `sonde export FILE`.
func NewCmdExport(env *cmdutil.Env) *cobra.Command {
	var o ExportOptions
	var from, to diagram.Bound // --from and --to, parsed
	cmd := &cobra.Command{
		Use:   "export [--mermaid | --format text|otlp|html|har] [--from X] [--to Y] [-o OUT] FILE|SESSION",
		Short: "Draw a capture as a sequence diagram (Mermaid, or plain text), a self-contained HTML report or HAR, or write its spans as OTLP JSON",
		Long: `Read a capture (--record FILE) and draw it as a sequence diagram: the client (named by
its clientInfo: sonde, or the host of a sonde tap recording) and the server as two lanes, and
the requests sonde injected into a host's session on a third, sonde's; an arrow per frame (requests labelled with their method and id, responses with
the id they resolve and their latency, or late/duplicate/unknown), notes where a response
overtook a request sent before it, where a request timed out or was cancelled, and where the
server started or exited. Lines that are not messages are crossed arrows.

  sonde export --mermaid bug.jsonl > bug.mmd          a Mermaid sequenceDiagram
  sonde export --format text bug.jsonl                the same swimlane in plain text
  sonde export --from 1.5s --to 3s bug.jsonl          a window, by time from the start
  sonde export --from 120 --to 180 bug.jsonl          a window, by event number (seq)
  sonde export --format otlp bug.jsonl > bug.otlp     the session's spans as OTLP JSON (docs/otel.md)
  sonde export --format html bug.jsonl -o bug.html    one HTML file to send: opens offline in any browser
  sonde export --format har bug.jsonl -o bug.har      HAR 1.2 of an HTTP session (DevTools, Firefox, Charles)

--from and --to each take a duration from the capture's start (1.5s, 250ms) or an event
number (120, or #120); both ends are included. Labels are escaped so Mermaid parses any
method name.

--format otlp writes the spans a live session sends with --otlp-endpoint (same names,
attributes and ids, the capture's timestamps) as OTLP JSON Lines: one
ExportTraceServiceRequest per line, each of which a collector's /v1/traces takes as is
(curl -H 'Content-Type: application/json' --data-binary @LINE); --traceparent makes them
children of a span of yours. --from/--to do not apply.

--format html writes one self-contained page (no network fetch of any kind): the session's
header figures, a zoomable waterfall of its requests with a per-method latency table, the
sequence diagram in SVG, every frame with the filter language working in the page, and
the lint findings by severity (docs/export.md). --format har writes HAR 1.2 of a session
over HTTP; a stdio session is refused (exit status 2). Both take the whole capture: --from,
--to and --filter do not apply (the page filters itself). FILE may be a session of
sonde tap's folder, by its id or a prefix of it.

Exit status: 0, 2 for a bad flag, a file that cannot be read as a capture, or --format har
of a stdio session.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.Usagef("export takes one capture FILE (see sonde export --help)")
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) (err error) {
			from, to, err = checkExport(cmd, &o)
			return err
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := cmdutil.CaptureArg(args[0])
			if err != nil {
				return err
			}
			switch {
			case o.Format == "otlp":
				return exportOTLP(env, path, o.Traceparent)
			case wholeCapture(o.Format):
				return exportReport(env, path, o.Format, o.Out)
			}
			return runExport(env, &o, path, from, to)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.Mermaid, "mermaid", false, "write a Mermaid sequenceDiagram (the default)")
	fs.StringVar(&o.Format, "format", "mermaid", "mermaid, text (a plain-text swimlane for the terminal), otlp (OTLP JSON spans), html (a self-contained report) or har (HAR 1.2 of an HTTP session)")
	fs.StringVarP(&o.Out, "output", "o", "", "with --format html or har: the file to write (default stdout)")
	fs.StringVar(&o.From, "from", "", "start of the window: a duration from the start (1.5s) or an event number (120)")
	fs.StringVar(&o.To, "to", "", "end of the window (included), as --from")
	fs.IntVar(&o.Width, "width", 100, "width of the text swimlane in cells")
	fs.StringVar(&o.Traceparent, "traceparent", "", "with --format otlp: the W3C traceparent the spans are children of (the --traceparent the session ran with: a capture does not keep it)")
	addFilterFlag(cmd, &o.Filter)
	return cmd
}

// checkExport checks the flags of export before anything is read, and
// parses the window's bounds.
func checkExport(cmd *cobra.Command, o *ExportOptions) (from, to diagram.Bound, err error) {
	switch {
	case o.Mermaid && cmd.Flags().Changed("format") && o.Format != "mermaid":
		return from, to, cmdutil.Usagef("--mermaid and --format " + o.Format + " disagree: give one")
	case !slices.Contains(exportFormats, o.Format):
		return from, to, cmdutil.Usagef("--format is mermaid, text, otlp, html or har, not " + o.Format)
	case o.Width < 40:
		return from, to, cmdutil.Usagef("--width must be at least 40")
	case o.Format == "otlp" && o.Filter != "":
		return from, to, cmdutil.Usagef("--filter draws a diagram's frames; --format otlp writes every span")
	case wholeCapture(o.Format) && (o.Filter != "" || o.From != "" || o.To != ""):
		return from, to, cmdutil.Usagef("--format " + o.Format + " takes the whole capture: --filter, --from and --to do not apply")
	case o.Out != "" && !wholeCapture(o.Format):
		return from, to, cmdutil.Usagef("-o is for --format html and har; the other formats go to stdout")
	}
	if from, err = diagram.ParseBound(o.From); err != nil {
		return from, to, cmdutil.Usagef("--from: " + err.Error())
	}
	if to, err = diagram.ParseBound(o.To); err != nil {
		return from, to, cmdutil.Usagef("--to: " + err.Error())
	}
	return from, to, nil
}

// exportFormats are the values of --format.
var exportFormats = []string{"mermaid", "text", "otlp", "html", "har"}

// wholeCapture reports whether a format writes the whole capture (no
// window, no filter).
func wholeCapture(format string) bool { return format == "html" || format == "har" }

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
