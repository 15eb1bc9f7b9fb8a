package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
)

// FuzzCaptureToReport runs `sonde stats` end to end on any file: the
// capture reader, records back to events, the collector, the report in
// text and JSON. Damaged files are refused or their bad lines skipped;
// nothing panics, and the text report holds no control byte but newlines.
func FuzzCaptureToReport(f *testing.F) {
	if b, err := os.ReadFile(samplePath); err == nil {
		f.Add(b)
	}
	head := `{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z"}` + "\n"
	f.Add([]byte(head + `{"type":"request","seq":1,"t":5,"dir":"out","id":1,"method":"tools/call","tool":"a\u001b[2J","state":"done","latency":9223372036854775807}` + "\n"))
	f.Add([]byte(head + `{"type":"request","seq":1,"t":0,"dir":"in","id":"s","method":"\u009b31m","state":"queued"}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := capture.NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		h := r.Header()
		c := New(h.Start)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var fe *capture.FormatError
				if !asFormatError(err, &fe) {
					return
				}
				continue
			}
			if ev, ok, err := h.Event(rec); err == nil && ok {
				c.Add(ev)
			}
		}
		for _, bucket := range []int64{0, 1, 1e9} {
			rep := c.Report(durationOf(bucket))
			var out strings.Builder
			if err := rep.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			for _, ch := range out.String() {
				if (ch < 0x20 && ch != '\n') || ch == 0x7f || (ch >= 0x80 && ch < 0xa0) {
					t.Fatalf("control character %U in the report:\n%q", ch, out.String())
				}
			}
			if _, err := json.Marshal(rep); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func asFormatError(err error, fe **capture.FormatError) bool { return errors.As(err, fe) }

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

// TestReportBoundsBuckets: a bucket width far too small for the session
// (1ns over seconds) is widened, not allocated as billions of buckets.
func TestReportBoundsBuckets(t *testing.T) {
	c := New(time.Unix(0, 0))
	c.last = time.Unix(0, 0).Add(5 * time.Second)
	rep := c.Report(time.Nanosecond)
	if n := len(rep.Concurrency.InFlight); n > MaxGivenBuckets || rep.Concurrency.Bucket <= time.Nanosecond {
		t.Fatalf("%d buckets of %v", n, rep.Concurrency.Bucket)
	}
}
