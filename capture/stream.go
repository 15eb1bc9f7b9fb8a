package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// rawMark stands for a big frame's raw bytes while its record is encoded;
// rawMarkJSON is how it comes out, the "raw" member included. A quote that
// is not escaped only ever bounds a string, so that text can only be the
// record's own "raw" member.
const rawMark = "\x00sonde-raw\x00"

var rawMarkJSON = []byte(`"raw":"\u0000sonde-raw\u0000"`)

// writeBigLocked writes rec with big as its raw bytes: the record encoded
// with rawMark, then its text up to the mark, the bytes escaped (or base64)
// straight into the buffered writer, and the rest. The output is exactly
// what writeRecordLocked would write with Raw set (escaping as encoding/json
// does), without holding the bytes again as a string, an escaped copy and a
// buffer grown to their size.
func (r *Recorder) writeBigLocked(rec Record, big *bigRaw) {
	if r.sum.Err != nil {
		return
	}
	rec.Raw = rawMark
	line, err := r.recordLineLocked(&rec, nil)
	if err != nil {
		r.sum.Err = fmt.Errorf("capture: encode: %w", err)
		return
	}
	i := bytes.Index(line, rawMarkJSON)
	if i < 0 || bytes.Count(line, rawMarkJSON) != 1 {
		// Cannot happen (see rawMark); stay correct at the cost of a copy.
		rec.Raw = big.text()
		r.writeRecordLocked(&rec)
		return
	}
	open, end := i+len(`"raw":"`), i+len(rawMarkJSON)-1
	r.putLocked(line[:open])
	if r.sum.Err == nil {
		var n int64
		var err error
		if big.b64 {
			n, err = writeBase64(r.bw, big.b)
		} else {
			n, err = writeJSONStringBody(r.bw, big.b)
		}
		r.sum.Bytes += n
		if err != nil {
			r.sum.Err = fmt.Errorf("capture: write: %w", err)
		}
	}
	r.putLocked(line[end:])
}

// putLocked writes b to the buffered writer and counts it.
func (r *Recorder) putLocked(b []byte) {
	if r.sum.Err != nil {
		return
	}
	n, err := r.bw.Write(b)
	r.sum.Bytes += int64(n)
	if err != nil {
		r.sum.Err = fmt.Errorf("capture: write: %w", err)
	}
}

// countingWriter counts what goes through it.
type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// writeBase64 writes b in standard base64 (as base64.StdEncoding's
// EncodeToString would), in pieces, and returns the bytes written.
func writeBase64(w *bufio.Writer, b []byte) (int64, error) {
	cw := &countingWriter{w: w}
	enc := base64.NewEncoder(base64.StdEncoding, cw)
	if _, err := enc.Write(b); err != nil {
		return cw.n, err
	}
	err := enc.Close()
	return cw.n, err
}

// writeJSONStringBody writes the valid UTF-8 text b as the inside of a JSON
// string (no quotes), escaped as encoding/json escapes it with HTML escaping
// off: runs that need no escape go to w as they are, from b itself. It
// returns the bytes written.
func writeJSONStringBody(w *bufio.Writer, b []byte) (int64, error) {
	var total int64
	put := func(p []byte) error {
		n, err := w.Write(p)
		total += int64(n)
		return err
	}
	putString := func(s string) error {
		n, err := w.WriteString(s)
		total += int64(n)
		return err
	}
	start := 0
	for i := 0; i < len(b); {
		c := b[i]
		esc, width := "", 1
		switch {
		case c < utf8.RuneSelf:
			esc = jsonEscapes[c]
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2] == 0xA8:
			esc, width = lineSep, 3
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && b[i+2] == 0xA9:
			esc, width = paraSep, 3
		}
		if esc == "" {
			i++
			continue
		}
		if err := put(b[start:i]); err != nil {
			return total, err
		}
		if err := putString(esc); err != nil {
			return total, err
		}
		i += width
		start = i
	}
	return total, put(b[start:])
}

// jsonEscapes[c] is how encoding/json writes the ASCII byte c inside a
// string with HTML escaping off, when that is not c itself; lineSep and
// paraSep are U+2028 and U+2029, which it escapes too. They are taken from
// encoding/json itself, so the streamed text is byte for byte what it
// writes.
var jsonEscapes, lineSep, paraSep = func() (t [utf8.RuneSelf]string, ls, ps string) {
	enc := func(s string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		_ = e.Encode(s)
		out := b.String() // "…" and a newline
		return out[1 : len(out)-2]
	}
	for c := range utf8.RuneSelf {
		if s := enc(string(rune(c))); s != string(rune(c)) {
			t[c] = s
		}
	}
	return t, enc("\u2028"), enc("\u2029")
}()
