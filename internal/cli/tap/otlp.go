package tap

import (
	"context"
	"fmt"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
)

// startTelemetry starts the tap's OpenTelemetry export (--otlp-endpoint;
// nil when none): the spans a host would emit, parented on the traceparent
// each request carries, which the tap forwards untouched.
func startTelemetry(o *Options, red *capture.Redactor) (*connect.Telemetry, error) {
	return connect.StartTelemetry(context.Background(), &o.OTLP, "sonde-tap", func(b []byte) []byte { out, _ := red.Bytes(b); return out })
}

// observe has tel follow the session's observer: the recording's, or a new
// one when the tap does not record. It returns the observer.
func observe(tel *connect.Telemetry, obs *client.Observer) *client.Observer {
	if !tel.Exports() {
		return obs
	}
	if obs == nil {
		obs = client.NewObserver(0)
	}
	tel.Observe(obs)
	return obs
}

// endObservation closes the observer (the end of the session's events),
// the recording, and the export (its one warning on env.Err).
func endObservation(env *cmdutil.Env, obs *client.Observer, rec *capture.Recorder, recPath string, tel *connect.Telemetry) {
	if obs != nil {
		obs.Close()
	}
	if rec != nil {
		if sum := rec.Close(); sum.Err != nil {
			fmt.Fprintf(env.Err, "sonde tap: recording %s: %v\n", recPath, sum.Err)
		}
	}
	tel.Close(env.Err)
}
