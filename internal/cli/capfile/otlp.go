package capfile

import (
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/observe"
)

// tapNotePrefix starts the first note of a capture sonde tap recorded: its
// requests are the host's, parented on the host's traceparent.
const tapNotePrefix = "sonde tap: "

// exportOTLP writes the spans of the capture at path as OTLP JSON Lines.
func exportOTLP(env *cmdutil.Env, path string) error {
	var out *observe.JSON
	var last time.Time
	first := true
	_, warnings, err := eachEvent(path, nil, func(ev client.Event) {
		if first {
			first = false
			o := observe.FoldOptions{}
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
