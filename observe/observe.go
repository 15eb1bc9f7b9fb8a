// Package observe sends sonde's sessions to an OpenTelemetry backend by the
// MCP semantic conventions (docs/otel.md): a Folder turns the event stream
// of a client (or of a tap's observer, or of a capture) into spans and the
// MCP duration histograms; Telemetry runs a Folder beside a live session
// and exports through the official SDK's OTLP/HTTP exporters, on a bounded
// queue that never holds up the session; WriteJSON writes the spans as
// OTLP JSON (sonde export --format otlp); an Injector puts the trace
// context of each request into its params._meta.
package observe

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/sonde-mcp/sonde/client"
)

// The standard variables Telemetry reads (flags win over them).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	EnvMetrics        = "OTEL_METRICS_EXPORTER"
)

// Defaults of Config.
const (
	DefaultQueue = 16384
	// ContentQueue is the queue with --otlp-content, whose spans may each
	// carry 2 × MaxContentBytes.
	ContentQueue = 256
	// exportBatch is the most spans one export carries.
	exportBatch          = 1024
	DefaultExportTimeout = 3 * time.Second
	// DefaultBuffer is the event subscription's buffer of Follow: the
	// folder falls behind a burst by that much before it misses events
	// (counted, in the warning).
	DefaultBuffer = 1 << 16
)

// Buckets are the advisory bucket boundaries (seconds) of the MCP duration
// histograms.
var Buckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Config says where telemetry goes and what it holds.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL (--otlp-endpoint);
	// traces go to Endpoint/v1/traces, metrics to Endpoint/v1/metrics.
	// Empty: OTEL_EXPORTER_OTLP_ENDPOINT, as the SDK reads it.
	Endpoint string
	// Headers are sent with every export (--otlp-header), on top of
	// OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string
	// ServiceName is service.name unless OTEL_SERVICE_NAME is set.
	ServiceName    string
	ServiceVersion string
	// Queue bounds the spans waiting for export (DefaultQueue); what does
	// not fit is dropped and counted.
	Queue int
	// Timeout bounds one export, retries included (DefaultExportTimeout).
	Timeout time.Duration
	// NoMetrics leaves the histograms out (also OTEL_METRICS_EXPORTER=none).
	NoMetrics bool
}

// Enabled reports whether an endpoint is configured, by cfg or by the
// standard variables.
func (cfg Config) Enabled() bool {
	return cfg.Endpoint != "" || os.Getenv(EnvEndpoint) != "" || os.Getenv(EnvTracesEndpoint) != ""
}

// ErrEndpoint is the cause of an --otlp-endpoint that is not an http(s) URL.
var ErrEndpoint = errors.New("not an http:// or https:// URL")

// Stats count what an export did.
type Stats struct {
	// Spans ended; Exported reached the collector; Dropped did not (the
	// queue was full, the collector refused or could not be reached, or
	// the run ended first).
	Spans, Exported, Dropped uint64
	// Missed counts the session's events the folder did not receive (its
	// buffer was full), whose spans may be incomplete.
	Missed uint64
	// Err is the first failure to export spans; MetricsErr the first to
	// export metrics (a collector that takes none answers 404).
	Err, MetricsErr error
}

// Warning is the one line that says what was lost, or "" when nothing was.
func (s Stats) Warning() string {
	var parts []string
	if s.Dropped > 0 || s.Missed > 0 || s.Err != nil {
		msg := fmt.Sprintf("otlp: %d of %d spans not exported", s.Dropped, s.Spans)
		if s.Missed > 0 {
			msg += fmt.Sprintf(", %d events missed", s.Missed)
		}
		if s.Err != nil {
			msg += " (first failure: " + s.Err.Error() + ")"
		}
		parts = append(parts, msg)
	}
	if s.MetricsErr != nil {
		parts = append(parts, "otlp: metrics not exported ("+s.MetricsErr.Error()+"; OTEL_METRICS_EXPORTER=none leaves them out)")
	}
	return strings.Join(parts, "; ")
}

// Telemetry exports the spans and metrics of live sessions. Create it with
// New (OTLP/HTTP) or NewWith (given exporters), Follow each session's
// client, then Shutdown.
type Telemetry struct {
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider
	tracer  trace.Tracer
	metrics *Metrics
	count   *counter
	exp     *guard
	mexp    *metricGuard

	mu      sync.Mutex
	wg      sync.WaitGroup
	missed  atomic.Uint64
	stopped bool
}

// New returns the telemetry of cfg, exporting over OTLP/HTTP. Nothing is
// sent before the first span ends; a collector that cannot be reached
// costs dropped spans, never a slower session.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	topts := []otlptracehttp.Option{otlptracehttp.WithTimeout(cfg.timeout()), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
		Enabled: true, InitialInterval: 100 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: cfg.timeout(),
	})}
	mopts := []otlpmetrichttp.Option{otlpmetrichttp.WithTimeout(cfg.timeout()), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false})}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--otlp-endpoint %q: %w", cfg.Endpoint, ErrEndpoint)
		}
		base := strings.TrimSuffix(u.String(), "/")
		topts = append(topts, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
		mopts = append(mopts, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
	}
	if len(cfg.Headers) > 0 {
		h := envHeaders()
		for k, v := range cfg.Headers {
			h[k] = v
		}
		topts = append(topts, otlptracehttp.WithHeaders(h))
		mopts = append(mopts, otlpmetrichttp.WithHeaders(h))
	}
	// Each exporter's own client follows redirects within the
	// endpoint's origin only: the headers go nowhere else.
	thc, err := exportClient("TRACES", cfg.timeout())
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	mhc, err := exportClient("METRICS", cfg.timeout())
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	topts = append(topts, otlptracehttp.WithHTTPClient(thc))
	mopts = append(mopts, otlpmetrichttp.WithHTTPClient(mhc))
	exp, err := otlptracehttp.New(ctx, topts...)
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	var mexp sdkmetric.Exporter
	if !cfg.NoMetrics && os.Getenv(EnvMetrics) != "none" {
		if mexp, err = otlpmetrichttp.New(ctx, mopts...); err != nil {
			return nil, fmt.Errorf("otlp: %w", err)
		}
	}
	return NewWith(exp, mexp, cfg), nil
}

func (cfg Config) timeout() time.Duration {
	if cfg.Timeout > 0 {
		return cfg.Timeout
	}
	return DefaultExportTimeout
}

// envHeaders reads OTEL_EXPORTER_OTLP_HEADERS (ParseEnvHeaders), which a
// WithHeaders option would otherwise replace.
func envHeaders() map[string]string {
	h, _ := ParseEnvHeaders(os.Getenv(EnvHeaders))
	return h
}

// Resource is the resource of sonde's telemetry: service.name (cfg's, or
// OTEL_SERVICE_NAME) and service.version, with OTEL_RESOURCE_ATTRIBUTES.
func Resource(cfg Config) *resource.Resource {
	name := cfg.ServiceName
	if name == "" {
		name = "sonde"
	}
	base := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(name), semconv.ServiceVersion(cfg.ServiceVersion))
	r, err := resource.Merge(base, resource.Environment())
	if err != nil {
		return base
	}
	return r
}

// NewWith returns telemetry exporting spans through exp (batched, on a
// bounded queue) and, unless mexp is nil, metrics through mexp at Shutdown
// (and every minute). Tests give the SDK's in-memory exporters.
func NewWith(exp sdktrace.SpanExporter, mexp sdkmetric.Exporter, cfg Config) *Telemetry {
	queue := cfg.Queue
	if queue <= 0 {
		queue = DefaultQueue
	}
	t := &Telemetry{count: &counter{}, exp: &guard{SpanExporter: exp}}
	res := Resource(cfg)
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithSpanProcessor(t.count),
		sdktrace.WithBatcher(t.exp, sdktrace.WithMaxQueueSize(queue), sdktrace.WithMaxExportBatchSize(exportBatch), sdktrace.WithBatchTimeout(time.Second)),
	)
	t.tracer = t.tp.Tracer(instrumentation)
	if mexp != nil {
		t.mexp = &metricGuard{Exporter: mexp}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(t.mexp, sdkmetric.WithInterval(time.Minute))))
		t.metrics, _ = NewMetrics(t.mp)
	}
	return t
}

// instrumentation is the instrumentation scope's name.
const instrumentation = "github.com/sonde-mcp/sonde/observe"

// Follow folds the events of sub (subscribed before the session started,
// with DefaultBuffer) in a goroutine of its own until sub is closed (the
// client closed). Wait for it with Shutdown.
func (t *Telemetry) Follow(sub *client.Subscription, o FoldOptions) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		sub.Close()
		return
	}
	f := NewFolder(t.tracer, t.metrics, o)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case ev, ok := <-sub.C:
				if !ok || !drain(f, ev, sub.C) {
					f.End(time.Now())
					t.missed.Add(sub.Missed())
					return
				}
				// Let the next events gather in the buffer: a folder
				// waiting on the channel would be woken by each of them,
				// a hand-off that costs the session's own goroutines.
				time.Sleep(foldPause)
			case now := <-tick.C:
				f.Flush(now)
			}
		}
	}()
}

// foldPause is how long a busy session's folder sleeps between draining
// its subscription. The buffer (DefaultBuffer events) holds a pause of
// more than a million events a second.
const foldPause = 10 * time.Millisecond

// drain folds ev and every event already waiting in c; false when c is
// closed.
func drain(f *Folder, ev client.Event, c <-chan client.Event) bool {
	f.Apply(ev)
	for {
		select {
		case ev, ok := <-c:
			if !ok {
				return false
			}
			f.Apply(ev)
		default:
			return true
		}
	}
}

// Shutdown waits for the followed sessions' folders (their clients must be
// closed), exports what is queued within ctx, stops the exporters and
// says what was lost.
func (t *Telemetry) Shutdown(ctx context.Context) Stats {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
	t.wg.Wait()
	_ = t.tp.Shutdown(ctx)
	if t.mp != nil {
		_ = t.mp.Shutdown(ctx)
	}
	s := Stats{Spans: t.count.ended.Load(), Exported: t.exp.ok.Load(), Missed: t.missed.Load(), Err: t.exp.firstErr()}
	if s.Spans > s.Exported {
		s.Dropped = s.Spans - s.Exported
	}
	if t.mexp != nil {
		s.MetricsErr = t.mexp.firstErr()
	}
	return s
}

// counter counts the spans that end (a span processor beside the batcher).
type counter struct{ ended atomic.Uint64 }

func (c *counter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (c *counter) OnEnd(sdktrace.ReadOnlySpan)                     { c.ended.Add(1) }
func (c *counter) Shutdown(context.Context) error                  { return nil }
func (c *counter) ForceFlush(context.Context) error                { return nil }

// failure keeps an exporter's first error.
type failure struct {
	mu  sync.Mutex
	err error
}

func (f *failure) note(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

func (f *failure) firstErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// guard counts what its exporter delivered and keeps the first failure;
// it reports success to the batcher, so the SDK never writes a failure on
// stderr itself (the run's one warning says it, with the count).
type guard struct {
	sdktrace.SpanExporter
	ok atomic.Uint64
	failure
}

func (g *guard) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := g.SpanExporter.ExportSpans(ctx, spans); err != nil {
		g.note(err)
		return nil
	}
	g.ok.Add(uint64(len(spans)))
	return nil
}

// metricGuard keeps the metric exporter's first failure, as guard does.
type metricGuard struct {
	sdkmetric.Exporter
	failure
}

func (g *metricGuard) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if err := g.Exporter.Export(ctx, rm); err != nil {
		g.note(err)
	}
	return nil
}

// Metrics are the MCP duration histograms, in seconds with the advisory
// buckets.
type Metrics struct{ inst *instruments }

type instruments struct {
	clientOp   metric.Float64Histogram
	serverOp   metric.Float64Histogram
	clientSess metric.Float64Histogram
}

// NewMetrics creates the histograms on mp.
func NewMetrics(mp metric.MeterProvider) (*Metrics, error) {
	m := mp.Meter(instrumentation)
	b := metric.WithExplicitBucketBoundaries(Buckets...)
	co, err1 := mcpconv.NewClientOperationDuration(m, b)
	so, err2 := mcpconv.NewServerOperationDuration(m, b)
	cs, err3 := mcpconv.NewClientSessionDuration(m, b)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	return &Metrics{inst: &instruments{clientOp: co.Inst(), serverOp: so.Inst(), clientSess: cs.Inst()}}, nil
}

// operation records an operation's duration; rec holds its attribute set
// (made once per kind of operation: no option built per call).
func (m *instruments) operation(kind trace.SpanKind, d time.Duration, rec []metric.RecordOption) {
	h := m.clientOp
	if kind == trace.SpanKindServer {
		h = m.serverOp
	}
	h.Record(context.Background(), d.Seconds(), rec...)
}

func (m *instruments) session(_ Mode, d time.Duration, attrs []attribute.KeyValue) {
	m.clientSess.Record(context.Background(), d.Seconds(), metric.WithAttributes(attrs...))
}
