package capfile

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/observe"
)

// tapNotePrefix starts the first note of a capture sonde tap recorded: its
// requests are the host's, parented on the host's traceparent.
const tapNotePrefix = "sonde tap: "

// exportOTLP writes the spans of the capture at path as OTLP JSON Lines,
// children of traceparent when it is given.
func exportOTLP(env *cmdutil.Env, path, traceparent string) error {
	var parent trace.SpanContext
	if traceparent != "" {
		sc, err := observe.ParseTraceparent(traceparent, "")
		if err != nil {
			return cmdutil.Usagef(fmt.Sprintf("--traceparent %q: %v", traceparent, err))
		}
		parent = sc
	}
	var out *observe.JSON
	var last time.Time
	first := true
	_, warnings, err := eachEvent(path, nil, func(ev client.Event) {
		if first {
			first = false
			o := observe.FoldOptions{Parent: parent}
			if ev.Kind == client.EvNote && strings.HasPrefix(ev.Note, tapNotePrefix) {
				o.Mode = observe.ModeTap
			}
			out = observe.NewJSON(env.Out, observe.Config{ServiceName: "sonde", ServiceVersion: cmdutil.Version}, o)
		}
		out.Apply(ev)
		last = ev.Time
	})
	if out != nil {
		if cerr := out.Close(last); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	warnCapture(env, path, warnings)
	return nil
}
