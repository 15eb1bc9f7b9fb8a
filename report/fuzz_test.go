package report_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/report"
)

// FuzzReport feeds arbitrary capture files to the report: it never
// panics, the page's data decodes back to the model, and nothing of the
// capture reaches the page's HTML outside the base64 data.
func FuzzReport(f *testing.F) {
	for _, name := range []string{"out-of-order-late-crash.jsonl", "concurrent-calls.jsonl"} {
		if b, err := os.ReadFile(filepath.Join("..", "testdata", "captures", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z","transport":"stdio"}` + "\n" +
		`{"type":"frame","seq":1,"t":5,"dir":"in","raw":"</script>","verdict":"malformed"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := capture.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		h := rd.Header()
		b := report.New(h, report.Options{File: "</script>", Sonde: "fuzz"})
		for rec, err := range rd.All() {
			if err != nil {
				break
			}
			if ev, ok, err := h.Event(rec); err == nil && ok {
				b.Add(ev)
			}
		}
		m := b.Model()
		var page bytes.Buffer
		if err := report.Write(&page, m); err != nil {
			t.Fatal(err)
		}
		s := page.String()
		i, j := strings.Index(s, `id="sonde-data">`), strings.Index(s, "</script>\n<script>")
		if i < 0 || j < i {
			t.Fatal("the page has no data element")
		}
		raw, err := base64.StdEncoding.DecodeString(s[i+len(`id="sonde-data">`) : j])
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var back report.Model
		if err := json.NewDecoder(zr).Decode(&back); err != nil {
			t.Fatal(err)
		}
		if len(back.Rows) != len(m.Rows) || len(back.Spans) != len(m.Spans) || back.Meta.Events != m.Meta.Events {
			t.Fatalf("the data decodes to %d rows, %d spans; the model has %d, %d", len(back.Rows), len(back.Spans), len(m.Rows), len(m.Spans))
		}
	})
}
