package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/sonde-mcp/sonde/client"
)

// Entry locates one record of a capture file.
type Entry struct {
	// Offset is the byte offset of the record's line (for ReadRecordAt).
	Offset int64
	// T is the record's time offset (ns since Header.Start).
	T int64
	// Seq is the record's event sequence number (0 for the recorder's own
	// records).
	Seq uint64
	// Type is the record's type.
	Type string
	// Line is the 1-based line number.
	Line int
}

// Index lists every record of a capture file in order, without keeping the
// records: a replay seeks with it (ReadRecordAt) instead of loading the file.
// Building it decodes only the start of each line (type, seq, t), so a line
// that is valid JSON but not a valid record is indexed and found bad
// (ErrBadRecord) when it is read.
type Index struct {
	Header  Header
	Entries []Entry
	// Truncated is set when the last line was incomplete (not indexed).
	Truncated bool
	// Bad counts lines that are not valid records (not indexed).
	Bad int
	// Skipped counts records of unknown types (not indexed).
	Skipped int

	// reached[i] is the largest T of Entries[:i+1]: records are in Seq
	// order, and an event's time is when it happened (a process exit is
	// stamped when the process was reaped), so T is not always increasing.
	reached []int64
}

// At returns the position of the first entry by which time t (ns since
// Header.Start) has been reached (the first whose T, or an earlier entry's,
// is at least t); len(Entries) if none.
func (ix *Index) At(t int64) int {
	return sort.Search(len(ix.reached), func(i int) bool { return ix.reached[i] >= t })
}

func (ix *Index) add(e Entry) {
	r := e.T
	if n := len(ix.reached); n > 0 && ix.reached[n-1] > r {
		r = ix.reached[n-1]
	}
	ix.Entries = append(ix.Entries, e)
	ix.reached = append(ix.reached, r)
}

// File is a capture opened for random access: its header, its index, and
// records read on demand.
type File struct {
	f     *os.File
	Index *Index
}

// Open opens a capture file and indexes it (one pass over the file, decoding
// only the start of each line).
func Open(path string) (*File, error) { return OpenFunc(path, nil) }

// OpenFunc is Open, calling fn (when not nil) with each record as it is
// indexed: its position in Index.Entries, its entry, and the bytes of its
// line without the newline (valid only during the call). A reader that
// needs more of each line than the index keeps (the replay's timeline)
// reads it in the same pass instead of reading the file a second time.
func OpenFunc(path string, fn func(i int, e Entry, line []byte)) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	hint := 0
	if st, err := f.Stat(); err == nil {
		hint = SizeHint(st.Size())
	}
	ix, err := buildIndex(f, hint, fn)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, Index: ix}, nil
}

// SizeHint is about how many records a capture file of size bytes holds
// (a little more than most have: records are 150 to 250 bytes), for
// reserving room once instead of growing a list of them many times over.
func SizeHint(size int64) int { return int(min(max(size, 0)/160, 1<<24)) }

// Record reads the i-th indexed record.
func (f *File) Record(i int) (Record, error) {
	e := f.Index.Entries[i]
	rec, err := ReadRecordAt(f.f, e.Offset)
	rec.Line = e.Line
	return rec, err
}

// Event reads the i-th indexed record as a client event (see Header.Event:
// ok is false for the recorder's own records).
func (f *File) Event(i int) (ev client.Event, ok bool, err error) {
	rec, err := f.Record(i)
	if err != nil {
		return client.Event{}, false, err
	}
	return f.Index.Header.Event(rec)
}

// From returns a Reader that streams the records from the i-th indexed one
// to the end (e.g. from a replay checkpoint), sequentially: cheaper than
// Record(i) per record. Line numbers and offsets are those of the file.
func (f *File) From(i int) (*Reader, error) {
	ix := f.Index
	if i < 0 || i > len(ix.Entries) {
		return nil, fmt.Errorf("capture: no record %d (the index has %d)", i, len(ix.Entries))
	}
	st, err := f.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	off, line := st.Size(), 0
	if i < len(ix.Entries) {
		off, line = ix.Entries[i].Offset, ix.Entries[i].Line-1
	} else if n := len(ix.Entries); n > 0 {
		line = ix.Entries[n-1].Line
	}
	rd := newReader(io.NewSectionReader(f.f, off, st.Size()-off))
	rd.header, rd.off, rd.line = ix.Header, off, line
	rd.major, rd.minor, _ = parseVersion(ix.Header.Version)
	return rd, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// BuildIndex reads a whole capture from r and returns its index. The header
// is checked as by NewReader.
func BuildIndex(r io.Reader) (*Index, error) { return buildIndex(r, 0, nil) }

// buildIndex is BuildIndex with room reserved for hint entries, calling fn
// (if not nil) as OpenFunc does.
func buildIndex(r io.Reader, hint int, fn func(int, Entry, []byte)) (*Index, error) {
	rd, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	ix := &Index{Header: rd.Header(), Entries: make([]Entry, 0, hint), reached: make([]int64, 0, hint)}
	for {
		line, off, complete, err := rd.readLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			if fe := (*FormatError)(nil); errors.As(err, &fe) {
				ix.Bad++ // a line over the cap, read past
				continue
			}
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e, ok := quickEntry(line)
		if !ok {
			var p struct {
				Type string `json:"type"`
				Seq  uint64 `json:"seq"`
				T    int64  `json:"t"`
			}
			if json.Unmarshal(line, &p) != nil {
				if !complete {
					ix.Truncated = true
					break
				}
				ix.Bad++
				continue
			}
			e = Entry{Type: p.Type, Seq: p.Seq, T: p.T}
		} else if !complete && !json.Valid(line) {
			ix.Truncated = true
			break
		}
		if e.Type == TypeHeader || e.T < 0 || e.T > int64(MaxSpan) {
			ix.Bad++ // a second header, a time out of range
			continue
		}
		if !knownType(e.Type) {
			ix.Skipped++
			continue
		}
		e.Offset, e.Line = off, rd.line
		ix.add(e)
		if fn != nil {
			fn(len(ix.Entries)-1, e, line)
		}
	}
	return ix, nil
}

// quickEntry reads type, seq and t from the start of a line written by this
// package ({"type":"…","seq":N,"t":N,…}) without decoding the rest. Other
// layouts report false and are decoded in full.
func quickEntry(line []byte) (Entry, bool) {
	const pre = `{"type":"`
	if !bytes.HasPrefix(line, []byte(pre)) {
		return Entry{}, false
	}
	rest := line[len(pre):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return Entry{}, false
	}
	e := Entry{Type: internType(rest[:q])}
	rest = rest[q+1:]
	if v, r, ok := quickField(rest, `,"seq":`); ok {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return Entry{}, false
		}
		e.Seq, rest = n, r
	}
	v, r, ok := quickField(rest, `,"t":`)
	if !ok {
		return Entry{}, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || len(r) == 0 || (r[0] != ',' && r[0] != '}') {
		return Entry{}, false
	}
	e.T = n
	return e, true
}

// quickField reads the number after key at the start of b.
func quickField(b []byte, key string) (num, rest []byte, ok bool) {
	if !bytes.HasPrefix(b, []byte(key)) {
		return nil, b, false
	}
	b = b[len(key):]
	i := 0
	for i < len(b) && (b[i] == '-' || (b[i] >= '0' && b[i] <= '9')) {
		i++
	}
	if i == 0 {
		return nil, b, false
	}
	return b[:i], b[i:], true
}

// internType returns the constant for a known type name (no allocation).
func internType(b []byte) string {
	for _, t := range []string{TypeFrame, TypeRequest, TypeStderr, TypeProcess, TypeNote, TypeHTTP, TypeSession, TypeMissed, TypeEnd, TypeRestart} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}
