package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"regexp"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sonde-mcp/sonde/client"
)

// JSONBatch is how many spans one line of OTLP JSON holds at most.
const JSONBatch = 512

// JSON writes the spans of a folded event stream as OTLP JSON Lines (the
// format of the OpenTelemetry file exporter): one ExportTraceServiceRequest
// per line, as a collector's /v1/traces takes it. The SDK's OTLP exporter
// turns the spans into the protocol's messages; JSON only encodes them, with
// the ids in hex as OTLP JSON wants.
type JSON struct {
	folder *Folder
	tp     *sdktrace.TracerProvider
	out    *jsonClient
}

// NewJSON returns a writer of OTLP JSON to w, folding with o. Feed it
// events with Apply, then Close.
func NewJSON(w io.Writer, cfg Config, o FoldOptions) *JSON {
	out := &jsonClient{w: bufio.NewWriter(w)}
	exp := otlptrace.NewUnstarted(out)
	_ = exp.Start(context.Background())
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(Resource(cfg)),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithMaxExportBatchSize(JSONBatch), sdktrace.WithMaxQueueSize(4*JSONBatch)),
	)
	return &JSON{folder: NewFolder(tp.Tracer(instrumentation), nil, o), tp: tp, out: out}
}

// Apply folds one event.
func (j *JSON) Apply(ev client.Event) { j.folder.Apply(ev) }

// Close ends the stream at end, writes what is left and returns the first
// write error.
func (j *JSON) Close(end time.Time) error {
	j.folder.End(end)
	_ = j.tp.Shutdown(context.Background())
	j.out.mu.Lock()
	defer j.out.mu.Unlock()
	if err := j.out.w.Flush(); err != nil && j.out.err == nil {
		j.out.err = err
	}
	return j.out.err
}

// jsonClient is the exporter's client: it writes each upload as a line.
type jsonClient struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (c *jsonClient) Start(context.Context) error { return nil }
func (c *jsonClient) Stop(context.Context) error  { return nil }

func (c *jsonClient) UploadTraces(_ context.Context, spans []*tracepb.ResourceSpans) error {
	line, err := MarshalJSON(&coltracepb.ExportTraceServiceRequest{ResourceSpans: spans})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.err == nil {
		_, err = c.w.Write(append(line, '\n'))
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return nil
}

// idField matches the id members of spans and links in protojson's
// output (base64), which OTLP JSON writes in hex.
var idField = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":\s*"([A-Za-z0-9+/=]*)"`)

// MarshalJSON encodes an export request as one line of OTLP JSON: the
// protobuf JSON mapping with enums as numbers and trace and span ids in
// hex.
func MarshalJSON(req *coltracepb.ExportTraceServiceRequest) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseEnumNumbers: true}.Marshal(req)
	if err != nil {
		return nil, err
	}
	b = idField.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := idField.FindSubmatch(m)
		raw, err := base64.StdEncoding.DecodeString(string(sub[2]))
		if err != nil {
			return m
		}
		return []byte(`"` + string(sub[1]) + `":"` + hex.EncodeToString(raw) + `"`)
	})
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
