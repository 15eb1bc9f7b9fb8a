package capture

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestReaderRefusesOverCapLineWhileReading: a line over MaxLineBytes is
// refused once the cap is passed, not after it was buffered whole; what
// was allocated stays near the cap, whatever the line's length; and the
// record after it is read.
func TestReaderRefusesOverCapLineWhileReading(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z"}` + "\n")
	b.WriteString(`{"type":"note","seq":1,"t":0,"note":"`)
	b.WriteString(strings.Repeat("x", 2*MaxLineBytes))
	b.WriteString("\"}\n")
	b.WriteString(`{"type":"note","seq":2,"t":5,"note":"after"}` + "\n")
	data := b.Bytes()

	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	use := memtest.Measure(func() { _, err = r.Next() })
	var fe *FormatError
	if !errors.As(err, &fe) || !errors.Is(err, ErrBadRecord) || fe.Line != 2 || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Next = %v, want a FormatError on line 2 naming the cap", err)
	}
	if use.Total > 5*MaxLineBytes/2 {
		t.Errorf("allocated %d bytes refusing a %d-byte line (cap %d): %.2f× the cap", use.Total, 2*MaxLineBytes, MaxLineBytes, memtest.Ratio(use.Total, MaxLineBytes))
	}
	rec, err := r.Next()
	if err != nil || rec.Seq != 2 {
		t.Fatalf("after the long line: %+v, %v", rec, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}

	ix, err := BuildIndex(bytes.NewReader(data))
	if err != nil || ix.Bad != 1 || len(ix.Entries) != 1 || ix.Entries[0].Seq != 2 {
		t.Fatalf("index: %+v, %v; want the long line counted bad and seq 2 indexed", ix, err)
	}
}

// TestReaderRefusesTimesOutOfRange: a hostile or damaged capture's times
// (here the most negative latency, which once sent a formatter into endless
// recursion) are a FormatError naming the line and the field; a second
// header line is named as such, not as a record of a newer sonde.
func TestReaderRefusesTimesOutOfRange(t *testing.T) {
	head := `{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z"}` + "\n"
	for _, c := range []struct{ line, want string }{
		{`{"type":"request","seq":1,"t":5,"latency":-9223372036854775808}`, "latency -9223372036854775808 ns is out of range"},
		{`{"type":"request","seq":1,"t":5,"deadline":9223372036854775807}`, "deadline"},
		{`{"type":"note","seq":1,"t":-1}`, "t -1 ns"},
		{`{"type":"process","seq":1,"t":1,"exit":{"pid":1,"code":0,"t":-5}}`, "exit.t"},
		{`{"type":"http","seq":1,"t":1,"http":{"duration":-1}}`, "http.duration"},
		{head[:len(head)-1], "a second header line"},
	} {
		data := head + c.line + "\n" + `{"type":"note","seq":2,"t":5,"note":"after"}` + "\n"
		r, err := NewReader(strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Line != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Next = %v, want line 2: %q", c.line, err, c.want)
		}
		if rec, err := r.Next(); err != nil || rec.Seq != 2 {
			t.Errorf("%s: then %+v, %v", c.line, rec, err)
		}
		if len(r.Warnings()) != 0 {
			t.Errorf("%s: warnings %q", c.line, r.Warnings())
		}
	}
}
