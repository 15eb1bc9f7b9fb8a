package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/internal/lines"
)

// MaxLineBytes bounds one line of a capture (a frame of up to 64 MiB,
// base64-encoded, fits).
const MaxLineBytes = 96 << 20

// Sentinels of the errors a Reader returns; match them with errors.Is.
var (
	// ErrNotCapture: the first line is not a sonde capture header.
	ErrNotCapture = errors.New("not a sonde capture")
	// ErrNewerVersion: the capture was written by a newer, incompatible
	// format (a higher major version).
	ErrNewerVersion = errors.New("capture format is newer than this sonde")
	// ErrBadRecord: a line (not the last) is not a valid record. Reading can
	// go on past it.
	ErrBadRecord = errors.New("bad capture record")
)

// FormatError is what a Reader returns for a bad header or a bad record:
// where, and why. It matches ErrNotCapture, ErrNewerVersion or ErrBadRecord
// with errors.Is.
type FormatError struct {
	Line   int
	Offset int64
	Kind   error // one of the sentinels
	Reason string
}

// Error is "capture line N: reason".
func (e *FormatError) Error() string {
	return fmt.Sprintf("capture line %d: %v: %s", e.Line, e.Kind, e.Reason)
}

// Unwrap returns the sentinel.
func (e *FormatError) Unwrap() error { return e.Kind }

// Reader streams the records of a capture, one line at a time: memory does
// not grow with the file.
type Reader struct {
	br        *bufio.Reader
	header    Header
	major     int
	minor     int
	off       int64 // offset of the next line
	line      int   // number of the last line read
	truncated bool
	skipped   map[string]int
	long      lines.Blocks
	dec       recScanner
}

// NewReader reads and checks the header. A first line that is not a
// header is ErrNotCapture; a newer major version is ErrNewerVersion; an
// older or same-major version is accepted.
func NewReader(r io.Reader) (*Reader, error) {
	rd := newReader(r)
	line, off, complete, err := rd.readLine()
	if err == io.EOF {
		return nil, &FormatError{Line: 1, Kind: ErrNotCapture, Reason: "the file is empty"}
	}
	if err != nil {
		return nil, err
	}
	h, major, minor, herr := parseHeader(line)
	if herr != "" {
		if !complete {
			herr += " (the header line is incomplete)"
		}
		return nil, &FormatError{Line: 1, Offset: off, Kind: ErrNotCapture, Reason: herr}
	}
	if major > VersionMajor {
		return nil, &FormatError{Line: 1, Offset: off, Kind: ErrNewerVersion, Reason: fmt.Sprintf("version %s; this sonde reads version %d.x and older (upgrade sonde)", h.Version, VersionMajor)}
	}
	rd.header, rd.major, rd.minor = h, major, minor
	return rd, nil
}

func newReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 256<<10), skipped: map[string]int{}}
}

// parseVersion splits "MAJOR.MINOR".
func parseVersion(v string) (major, minor int, ok bool) {
	ma, mi, found := strings.Cut(v, ".")
	major, err1 := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(mi)
	if !found || err1 != nil || err2 != nil || major < 1 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

func parseHeader(line []byte) (Header, int, int, string) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return h, 0, 0, "the first line is not a JSON header: " + err.Error()
	}
	if h.Type != TypeHeader || h.Format != Format {
		return h, 0, 0, fmt.Sprintf("the first line is not a %s header (type %q, format %q)", Format, h.Type, h.Format)
	}
	major, minor, ok := parseVersion(h.Version)
	if !ok {
		return h, 0, 0, fmt.Sprintf("bad version %q (want MAJOR.MINOR)", h.Version)
	}
	if h.Start.IsZero() {
		return h, 0, 0, "the header has no start time"
	}
	return h, major, minor, ""
}

// Header returns the capture's header.
func (r *Reader) Header() Header { return r.header }

// Version returns the capture's format version.
func (r *Reader) Version() (major, minor int) { return r.major, r.minor }

// Truncated reports whether the last line was incomplete (the recording
// was cut, e.g. sonde was killed mid-write) and was dropped. It is a warning:
// every complete record before it was returned.
func (r *Reader) Truncated() bool { return r.truncated }

// Skipped counts the records of unknown types skipped so far, by type
// (records of a newer minor version).
func (r *Reader) Skipped() map[string]int { return r.skipped }

// Warnings describes what was tolerated: a truncated last line, skipped
// record types.
func (r *Reader) Warnings() []string {
	var w []string
	if r.truncated {
		w = append(w, fmt.Sprintf("capture line %d is incomplete (the recording was cut); it was ignored", r.line))
	}
	for t, n := range r.skipped {
		w = append(w, fmt.Sprintf("%d records of unknown type %q skipped (written by a newer sonde)", n, t))
	}
	return w
}

// readLine returns the next line without its newline, its offset, and
// whether it ended with a newline. The slice is valid until the next call.
// A line over MaxLineBytes is refused as soon as the cap is passed: the
// rest of it is read past without being kept, and the next call returns
// the line after it.
func (r *Reader) readLine() ([]byte, int64, bool, error) {
	off := r.off
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long.Reset()
		for err == bufio.ErrBufferFull {
			r.long.Add(line)
			line, err = r.br.ReadSlice('\n')
			if r.long.Len()+len(line) > MaxLineBytes+1 {
				n := int64(r.long.Len() + len(line))
				for err == bufio.ErrBufferFull {
					line, err = r.br.ReadSlice('\n')
					n += int64(len(line))
				}
				r.off += n
				r.line++
				r.long.Reset()
				if err != nil && err != io.EOF {
					return nil, off, false, fmt.Errorf("capture: read: %w", err)
				}
				return nil, off, false, &FormatError{Line: r.line, Offset: off, Kind: ErrBadRecord, Reason: fmt.Sprintf("line longer than %d bytes (the cap of a capture line)", MaxLineBytes)}
			}
		}
		line = r.long.Join(line)
	}
	r.off += int64(len(line))
	if len(line) > 0 {
		r.line++
	}
	switch {
	case err == nil:
		return line[:len(line)-1], off, true, nil
	case err == io.EOF && len(line) > 0:
		return line, off, false, nil
	case err == io.EOF:
		return nil, off, false, io.EOF
	}
	return nil, off, false, fmt.Errorf("capture: read: %w", err)
}

// Next returns the next record. At the end it returns io.EOF (also after a
// truncated last line: see Truncated). A line that is not a valid record is
// a *FormatError matching ErrBadRecord, and Next may be called again to go
// on. Records of unknown types are skipped and counted (Skipped).
func (r *Reader) Next() (Record, error) {
	for {
		line, off, complete, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec Record
		if err := r.dec.decode(line, &rec); err != nil {
			if !complete {
				r.truncated = true
				return Record{}, io.EOF
			}
			return Record{}, &FormatError{Line: r.line, Offset: off, Kind: ErrBadRecord, Reason: err.Error()}
		}
		rec.Offset, rec.Line = off, r.line
		if rec.Type == TypeHeader {
			return Record{}, &FormatError{Line: r.line, Offset: off, Kind: ErrBadRecord, Reason: "a second header line (were two captures joined into one file?)"}
		}
		if !knownType(rec.Type) {
			r.skipped[rec.Type]++
			continue
		}
		if reason := rec.check(); reason != "" {
			return Record{}, &FormatError{Line: r.line, Offset: off, Kind: ErrBadRecord, Reason: reason}
		}
		return rec, nil
	}
}

// MaxSpan is the longest time a capture may describe: every time, latency,
// deadline and duration in it lies within [0, MaxSpan] (ten years). A value
// outside is damage (or a hostile file), refused like a line that is not
// JSON, before it can reach arithmetic that overflows or a timer set
// centuries ahead.
const MaxSpan = 10 * 365 * 24 * time.Hour

// check returns why a decoded record's times are out of range, or "".
func (rec *Record) check() string {
	reason := ""
	span := func(name string, v int64) { // the first field out of range
		if reason == "" {
			reason = checkSpan(name, v)
		}
	}
	span("t", rec.T)
	span("latency", rec.Latency)
	if rec.Deadline != nil {
		span("deadline", *rec.Deadline)
	}
	if rec.MaxEnd != nil {
		span("max_end", *rec.MaxEnd)
	}
	if rec.Timeout != 0 {
		span("timeout", rec.Timeout)
	}
	if rec.HTTP != nil {
		span("http.duration", rec.HTTP.Duration)
	}
	for _, ex := range [...]*ExitRec{rec.Exit, errExit(rec.Err)} {
		if ex != nil {
			span("exit.t", ex.T)
		}
	}
	return reason
}

// checkSpan returns why a time field is out of [0, MaxSpan], or "".
func checkSpan(name string, v int64) string {
	if v < 0 || v > int64(MaxSpan) {
		return fmt.Sprintf("%s %d ns is out of range (0 to %d)", name, v, int64(MaxSpan))
	}
	return ""
}

func errExit(e *ErrorRec) *ExitRec {
	if e == nil {
		return nil
	}
	return e.Exit
}

// All iterates over the records; a bad record is yielded as an error and
// iteration goes on; the end (io.EOF) is not yielded.
func (r *Reader) All() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(rec, err) {
				return
			}
			var fe *FormatError
			if err != nil && !errors.As(err, &fe) {
				return // an I/O error ends the iteration
			}
		}
	}
}

// Good iterates over the readable records: a bad record (a *FormatError)
// is skipped and its message appended to *warnings; an I/O error is
// yielded and ends the iteration.
func (r *Reader) Good(warnings *[]string) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for rec, err := range r.All() {
			var fe *FormatError
			if errors.As(err, &fe) {
				*warnings = append(*warnings, err.Error())
				continue
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

func knownType(t string) bool {
	switch t {
	case TypeFrame, TypeRequest, TypeStderr, TypeProcess, TypeNote, TypeHTTP, TypeSession, TypeMissed, TypeEnd, TypeRestart:
		return true
	}
	return false
}

// ReadRecordAt reads the record whose line starts at off (an Index entry's
// Offset) from a capture file.
func ReadRecordAt(ra io.ReaderAt, off int64) (Record, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(ra, off, 1<<62), 4<<10)
	var long lines.Blocks
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if long.Len()+len(chunk) > MaxLineBytes+1 {
			return Record{}, &FormatError{Offset: off, Kind: ErrBadRecord, Reason: fmt.Sprintf("line longer than %d bytes (the cap of a capture line)", MaxLineBytes)}
		}
		if err == bufio.ErrBufferFull {
			long.Add(chunk)
			continue
		}
		if err != nil && err != io.EOF {
			return Record{}, fmt.Errorf("capture: read: %w", err)
		}
		line = long.Join(chunk)
		break
	}
	var rec Record
	if err := decodeRecord(bytes.TrimRight(line, "\n"), &rec); err != nil {
		return Record{}, &FormatError{Offset: off, Kind: ErrBadRecord, Reason: err.Error()}
	}
	if reason := rec.check(); reason != "" {
		return Record{}, &FormatError{Offset: off, Kind: ErrBadRecord, Reason: reason}
	}
	rec.Offset = off
	return rec, nil
}
