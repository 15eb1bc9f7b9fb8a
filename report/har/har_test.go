package har_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/report/har"
)

// harOf writes the HAR of the capture at path.
func harOf(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	h, _ := capturetest.Records(t, path)
	b := har.New(h, har.Options{Creator: "sonde", Version: "test"})
	for _, ev := range capturetest.Events(t, path) {
		b.Add(ev)
	}
	var buf bytes.Buffer
	err := b.Write(&buf)
	return buf.Bytes(), err
}

// schema compiles testdata/har-1.2.schema.json.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/har-1.2.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sonde:har-1.2", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sonde:har-1.2")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validHAR writes the HAR of the capture at path, checks it against the
// HAR 1.2 schema and returns it decoded, and as written.
func validHAR(t *testing.T, path string) (har.Document, []byte) {
	t.Helper()
	out, err := harOf(t, path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema(t).Validate(inst); err != nil {
		t.Fatalf("the HAR is not HAR 1.2: %v\n%s", err, out)
	}
	var doc har.Document
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	return doc, out
}

// TestHARStreamableHTTP records a Streamable HTTP session (calls with
// progress, a tool error, a cancel), writes its HAR, validates it against
// the HAR 1.2 schema, and checks every JSON-RPC message of the session is
// in the body it travelled in: sonde's in a POST's postData, the server's
// in a response's content (SSE events or JSON).
func TestHARStreamableHTTP(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{HTTP: true}, func(ctx context.Context, c *client.Client) {
		capturetest.Outcomes(t)(ctx, c)
		if _, _, err := c.CallTool(ctx, "progress", json.RawMessage(`{"steps":2}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	doc, _ := validHAR(t, path)
	posted, received := "", ""
	methods := map[string]int{}
	for _, e := range doc.Log.Entries {
		methods[e.Request.Method]++
		if e.Request.PostData != nil {
			posted += e.Request.PostData.Text + "\n"
		}
		received += e.Response.Content.Text
		if e.Timings.Wait < 0 || e.Time < e.Timings.Wait {
			t.Errorf("entry %s %s: timings %+v, time %v", e.Request.Method, e.Request.URL, e.Timings, e.Time)
		}
		for _, h := range append(e.Request.Headers, e.Response.Headers...) {
			if strings.EqualFold(h.Name, "Authorization") && h.Value != capture.Redacted {
				t.Errorf("header %s not redacted", h.Name)
			}
		}
	}
	if methods["POST"] == 0 || methods["DELETE"] != 1 {
		t.Errorf("methods %v: want POSTs and the DELETE that ends the session", methods)
	}
	frames := 0
	for _, ev := range capturetest.Events(t, path) {
		if ev.Kind != client.EvFrame {
			continue
		}
		frames++
		body := received
		if ev.Frame.Dir == client.Out {
			body = posted
		}
		if !strings.Contains(body, string(ev.Frame.Raw)) {
			t.Errorf("frame #%d (%s) is in no %s body: %s", ev.Seq, ev.Frame.Dir, ev.Frame.Dir, ev.Frame.Raw)
		}
	}
	if frames < 8 || !strings.Contains(received, "data: ") {
		t.Errorf("%d frames, SSE bodies %v", frames, strings.Contains(received, "data: "))
	}
}

// TestHARSchemaCatchesMistakes checks the schema test can fail: a HAR
// without its timings, or with a version that is not 1.2, is refused.
func TestHARSchemaCatchesMistakes(t *testing.T) {
	sch := schema(t)
	for _, bad := range []string{
		`{"log":{"version":"1.1","creator":{"name":"x","version":"1"},"entries":[]}}`,
		`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":1,
		  "request":{"method":"GET","url":"http://x/","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":0},
		  "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":{"size":0,"mimeType":"x"},"redirectURL":"","headersSize":-1,"bodySize":0},
		  "cache":{}}]}}`,
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("the schema took %s", bad)
		}
	}
}

// TestHARRefusesStdio: a stdio session has no HTTP to write.
func TestHARRefusesStdio(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{}, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if out, err := harOf(t, path); !errors.Is(err, har.ErrStdio) || len(out) != 0 {
		t.Errorf("stdio: %v, %d bytes", err, len(out))
	}
}

// TestHARServerEverything writes the HAR of a session with the reference
// server over Streamable HTTP: it is HAR 1.2, and every message is in the
// body it travelled in.
func TestHARServerEverything(t *testing.T) {
	base := peertest.EverythingHTTP(t, "streamableHttp")
	path := filepath.Join(t.TempDir(), "everything-http.jsonl")
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"message":"hi"}`, "--record", path, "--url", base+"/mcp")
	if r.Code != 0 {
		t.Fatalf("call: %d %s", r.Code, r.Stderr)
	}
	out, err := harOf(t, path)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema(t).Validate(inst); err != nil {
		t.Fatalf("not HAR 1.2: %v", err)
	}
	var doc har.Document
	json.Unmarshal(out, &doc)
	var bodies strings.Builder
	for _, e := range doc.Log.Entries {
		if e.Request.PostData != nil {
			bodies.WriteString(e.Request.PostData.Text)
		}
		bodies.WriteString(e.Response.Content.Text)
	}
	n := 0
	for _, ev := range capturetest.Events(t, path) {
		if ev.Kind == client.EvFrame {
			n++
			if !strings.Contains(bodies.String(), string(ev.Frame.Raw)) {
				t.Errorf("frame #%d is in no body: %s", ev.Seq, ev.Frame.Raw)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d frames", n)
	}
}

// TestHARLegacySSE: a legacy HTTP+SSE session's HAR is HAR 1.2 too: the
// GET of the SSE stream carries the endpoint event and every message the
// server sent, each POST to the message endpoint the one sonde sent.
func TestHARLegacySSE(t *testing.T) {
	path := capturetest.Record(t, capturetest.Options{HTTP: true, SSE: true}, func(ctx context.Context, c *client.Client) {
		capturetest.Outcomes(t)(ctx, c)
	})
	doc, out := validHAR(t, path)
	var stream, posted string
	gets, posts := 0, 0
	for _, e := range doc.Log.Entries {
		switch e.Request.Method {
		case "GET":
			gets++
			stream += e.Response.Content.Text
			if !strings.Contains(e.Request.URL, "/sse") || !strings.Contains(e.Response.Content.MimeType, "text/event-stream") {
				t.Errorf("GET entry %s, content %q", e.Request.URL, e.Response.Content.MimeType)
			}
		case "POST":
			posts++
			if !strings.Contains(e.Request.URL, "/message") || e.Request.PostData == nil {
				t.Errorf("POST entry %s without its body", e.Request.URL)
				continue
			}
			posted += e.Request.PostData.Text + "\n"
		}
	}
	if gets != 1 || posts < 4 || !strings.Contains(stream, "event: endpoint") {
		t.Fatalf("%d GETs, %d POSTs, endpoint event in the stream: %v\n%s", gets, posts, strings.Contains(stream, "event: endpoint"), out)
	}
	for _, ev := range capturetest.Events(t, path) {
		if ev.Kind != client.EvFrame {
			continue
		}
		body := stream
		if ev.Frame.Dir == client.Out {
			body = posted
		}
		if !strings.Contains(body, string(ev.Frame.Raw)) {
			t.Errorf("frame #%d (%s) is in no %s body: %s", ev.Seq, ev.Frame.Dir, ev.Frame.Dir, ev.Frame.Raw)
		}
	}
}
