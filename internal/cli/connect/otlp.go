package connect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/observe"
)

// OTLPFlags send a session to an OpenTelemetry collector (docs/otel.md).
type OTLPFlags struct {
	Endpoint    string
	Headers     []string
	Content     bool
	Traceparent string
}

// Register adds the --otlp-* flags and --traceparent to fs.
func (o *OTLPFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "otlp-endpoint", "", "send the session's spans and metrics to the OpenTelemetry collector at `URL` over OTLP/HTTP (/v1/traces, /v1/metrics are added; default: $"+observe.EnvEndpoint+"); never slows the session: what cannot be sent is dropped and counted")
	fs.StringArrayVar(&o.Headers, "otlp-header", nil, "with an OTLP endpoint: send header `K=V` with every export (repeatable; adds to $"+observe.EnvHeaders+")")
	fs.BoolVar(&o.Content, "otlp-content", false, "with an OTLP endpoint: add tool call arguments and results to the spans (gen_ai.tool.call.arguments/.result), redacted as captures are")
	fs.StringVar(&o.Traceparent, "traceparent", "", "join the caller's trace: a W3C `TRACEPARENT` (00-<trace id>-<span id>-<flags>) that sonde's spans are children of; sonde puts each request's own traceparent in its params._meta")
}

// Telemetry is a run's OpenTelemetry export: nil when neither an endpoint
// nor --traceparent is given.
type Telemetry struct {
	tel      *observe.Telemetry // nil: --traceparent alone (propagation, no export)
	injector *observe.Injector
	fold     observe.FoldOptions
}

// StartTelemetry starts the export the flags ask for (nil, nil when they
// ask for none). redact is the captures' redaction, for --otlp-content.
func StartTelemetry(ctx context.Context, o *OTLPFlags, service string, redact func([]byte) []byte) (*Telemetry, error) {
	cfg := observe.Config{Endpoint: o.Endpoint, ServiceName: service, ServiceVersion: cmdutil.Version}
	if o.Content {
		// A span may then carry 64 KiB of content: a shorter queue keeps
		// the memory it may hold bounded as without.
		cfg.Queue = observe.ContentQueue
	}
	var parent trace.SpanContext
	if o.Traceparent != "" {
		sc, err := observe.ParseTraceparent(o.Traceparent, "")
		if err != nil {
			return nil, cmdutil.Usagef(fmt.Sprintf("--traceparent %q: %v", o.Traceparent, err))
		}
		parent = sc
	}
	for _, kv := range o.Headers {
		k, v, err := observe.ParseHeader(kv)
		if err != nil {
			name, _, _ := strings.Cut(kv, "=")
			return nil, cmdutil.Usagef(fmt.Sprintf("--otlp-header %s=…: %v", strings.TrimSpace(name), err))
		}
		if cfg.Headers == nil {
			cfg.Headers = map[string]string{}
		}
		cfg.Headers[k] = v
	}
	if !cfg.Enabled() {
		if len(o.Headers) > 0 || o.Content {
			return nil, cmdutil.Usagef("--otlp-header and --otlp-content need --otlp-endpoint (or $" + observe.EnvEndpoint + ")")
		}
		if !parent.IsValid() {
			return nil, nil
		}
		return &Telemetry{injector: observe.NewInjector(parent)}, nil
	}
	tel, err := observe.New(ctx, cfg)
	if errors.Is(err, observe.ErrEndpoint) {
		return nil, cmdutil.Usagef(err.Error())
	}
	if err != nil {
		return nil, err
	}
	fold := observe.FoldOptions{Parent: parent, Content: o.Content}
	if o.Content {
		fold.Redact = redact
	}
	return &Telemetry{tel: tel, injector: observe.NewInjector(parent), fold: fold}, nil
}

// Exports reports whether t sends spans (not --traceparent alone).
func (t *Telemetry) Exports() bool { return t != nil && t.tel != nil }

// Client adds the trace context of each request to opts (RequestMeta).
func (t *Telemetry) Client(opts *client.Options) {
	if t != nil {
		opts.RequestMeta = t.injector.Meta
	}
}

// Follow exports the spans of c's session; call it before Connect.
func (t *Telemetry) Follow(c *client.Client) {
	if t != nil && t.tel != nil {
		t.tel.Follow(c.Subscribe(observe.DefaultBuffer), t.fold)
	}
}

// Observe exports the spans of a tapped session seen by obs.
func (t *Telemetry) Observe(obs *client.Observer) {
	if t != nil && t.tel != nil {
		fold := t.fold
		fold.Mode = observe.ModeTap
		t.tel.Follow(obs.Subscribe(observe.DefaultBuffer), fold)
	}
}

// shutdownGrace bounds the last export at the end of a run.
const shutdownGrace = 5 * time.Second

// Close waits for the followed sessions (their clients closed), sends what
// is left within a few seconds, and says on w, in one warning, what could
// not be sent.
func (t *Telemetry) Close(w io.Writer) {
	if t == nil || t.tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if msg := t.tel.Shutdown(ctx).Warning(); msg != "" {
		fmt.Fprintln(w, "sonde: warning: "+msg)
	}
}

// OpenTelemetry starts the export the flags of a session ask for (nil,
// nil for none), redacting --otlp-content as the session's captures are.
func OpenTelemetry(ctx context.Context, f *Flags, t *Target, secrets *SecretSink) (*Telemetry, error) {
	r, err := redactor(f, t, secrets)
	if err != nil {
		return nil, err
	}
	return StartTelemetry(ctx, &f.OTLP, "sonde", func(b []byte) []byte { out, _ := r.Bytes(b); return out })
}
