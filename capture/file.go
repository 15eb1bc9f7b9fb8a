package capture

import (
	"errors"
	"os"

	"github.com/sonde-mcp/sonde/client"
)

// ErrIsDir is EachEvent's error for a path that is a directory.
var ErrIsDir = errors.New("is a directory")

// EachEvent reads the capture file at path: begin (if not nil) gets its
// header, then fn each client event it holds, in order, with the line of
// its record. It returns the header and the reader's warnings (a cut last
// line, skipped record types). It stops at the first error: opening the
// file (an *fs.PathError), ErrIsDir, or a *FormatError (not a capture, a
// newer format, a damaged record); callers word it for their users.
func EachEvent(path string, begin func(Header), fn func(client.Event, int)) (Header, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Header{}, nil, ErrIsDir
	}
	rd, err := NewReader(f)
	if err != nil {
		return Header{}, nil, err
	}
	h := rd.Header()
	if begin != nil {
		begin(h)
	}
	for rec, err := range rd.All() {
		if err != nil {
			return h, nil, err
		}
		ev, ok, err := h.Event(rec)
		if err != nil {
			return h, nil, err
		}
		if ok {
			fn(ev, rec.Line)
		}
	}
	return h, rd.Warnings(), nil
}
