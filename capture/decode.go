package capture

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// decodeRecord decodes one line into rec exactly as json.Unmarshal(line,
// rec) does into a zero Record, with the same error when it fails.
//
// Reading a capture is mostly this (docs/performance.md): encoding/json
// checks the whole line once and then finds each key among Record's thirty
// fields by reflection. The fast path reads the record as this package
// writes it in one pass: the top-level object's keys matched exactly, its
// strings, integers and booleans decoded in place, its ids by
// jsonrpc.ID.UnmarshalJSON, and the few nested values (progress, error,
// exit, http, decode_error, argv) handed to json.Unmarshal on their own
// bytes. Anything it does not read exactly as encoding/json would (a key
// that is not a field's exact name, a null, an escape of a surrogate,
// invalid UTF-8, a number that is not a plain integer, a syntax error) sends
// the whole line to json.Unmarshal instead, so both always agree
// (TestDecodeRecordMatchesEncodingJSON, FuzzDecodeRecord).
func decodeRecord(line []byte, rec *Record) error {
	var s recScanner
	return s.decode(line, rec)
}

// decode is decodeRecord, reusing the scanner's buffer.
func (s *recScanner) decode(line []byte, rec *Record) error {
	if s.record(line, rec) {
		return nil
	}
	*rec = Record{}
	return json.Unmarshal(line, rec)
}

// recScanner reads one record line (decodeRecord's fast path).
type recScanner struct {
	b   []byte
	i   int
	buf []byte // unescaped string bytes
}

// maxNest bounds the nesting of a value the fast path skips over; a deeper
// one is left to json.Unmarshal (whose own bound is far higher).
const maxNest = 256

func (s *recScanner) ws() { s.i = jsonrpc.SkipSpace(s.b, s.i) }

// record reads the whole line into rec; false means "use json.Unmarshal"
// (rec may then hold part of the line).
func (s *recScanner) record(line []byte, rec *Record) bool {
	s.b, s.i = line, 0
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return s.end()
	}
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !s.field(key, rec) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return s.end()
		default:
			return false
		}
	}
}

// end reports whether only white space follows the object.
func (s *recScanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// key reads an object key made of plain ASCII (no escapes): the only keys
// the fast path matches.
func (s *recScanner) key() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// field decodes the value of key into rec.
func (s *recScanner) field(key []byte, rec *Record) bool {
	if p, common := rec.stringField(key); p != nil {
		v, ok := s.str(common)
		*p = v
		return ok
	}
	switch string(key) {
	case "seq":
		return s.uint(&rec.Seq)
	case "count":
		return s.uint(&rec.Count)
	case "after_seq":
		return s.uint(&rec.AfterSeq)
	case "events":
		return s.uint(&rec.Events)
	case "missed":
		return s.uint(&rec.Missed)
	case "t":
		return s.int(&rec.T)
	case "timeout":
		return s.int(&rec.Timeout)
	case "latency":
		return s.int(&rec.Latency)
	case "size":
		return s.intNative(&rec.Size)
	case "pid":
		return s.intNative(&rec.Pid)
	case "deadline":
		return s.intPtr(&rec.Deadline)
	case "max_end":
		return s.intPtr(&rec.MaxEnd)
	case "b64":
		return s.bool(&rec.B64)
	case "redacted":
		return s.bool(&rec.Redacted)
	case "id":
		return s.id(&rec.ID)
	case "retry_of":
		return s.id(&rec.RetryOf)
	case "decode_error":
		return s.nested(&rec.Decode)
	case "progress":
		return s.nested(&rec.Progress)
	case "error":
		return s.nested(&rec.Err)
	case "argv":
		return s.nested(&rec.Argv)
	case "exit":
		return s.nested(&rec.Exit)
	case "http":
		return s.nested(&rec.HTTP)
	case "fault":
		return s.nested(&rec.Fault)
	case "hold":
		return s.nested(&rec.Hold)
	}
	return false
}

// stringField returns the string field named key, or nil, and the values
// it recurs with (decoded without allocating them again).
func (rec *Record) stringField(key []byte) (*string, []string) {
	switch string(key) {
	case "type":
		return &rec.Type, knownTypes
	case "dir":
		return &rec.Dir, knownDirs
	case "method":
		return &rec.Method, knownMethods
	case "kind":
		return &rec.Kind, knownKinds
	case "raw":
		return &rec.Raw, nil
	case "verdict":
		return &rec.Verdict, knownVerdicts
	case "detail":
		return &rec.Detail, nil
	case "stream":
		return &rec.Stream, nil
	case "event_id":
		return &rec.EventID, nil
	case "tool":
		return &rec.Tool, nil
	case "state":
		return &rec.State, knownStates
	case "params":
		return &rec.Params, nil
	case "data":
		return &rec.Data, nil
	case "what":
		return &rec.What, knownWhats
	case "signal":
		return &rec.Signal, nil
	case "note":
		return &rec.Note, nil
	case "protocol_version":
		return &rec.ProtocolVersion, nil
	case "server_name":
		return &rec.ServerName, nil
	case "server_version":
		return &rec.ServerVersion, nil
	}
	return nil, nil
}

// Values that recur on every line, returned as these strings rather than
// allocated again for each record.
var (
	knownTypes    = []string{TypeFrame, TypeRequest, TypeStderr, TypeProcess, TypeNote, TypeHTTP, TypeSession, TypeMissed, TypeEnd, TypeRestart}
	knownDirs     = []string{"in", "out"}
	knownKinds    = []string{"request", "notification", "response", "invalid"}
	knownVerdicts = []string{"sent", "resolved", "error", "late", "duplicate", "unknown", "malformed", "invalid", "too-long", "server-request", "notification", "progress"}
	knownStates   = []string{"queued", "sent", "progress", "held", "resolved", "error", "timeout", "cancelled", "exited", "closed", "protocol", "http", "rejected", "retried", "received", "answered"}
	knownMethods  = []string{"tools/call", "tools/list", "initialize", "notifications/initialized", "notifications/progress", "notifications/cancelled", "ping"}
	knownWhats    = []string{"start", "signal", "exit", "spawn-failed", "connect"}
)

// str reads a string value (one of common, when it is, without
// allocating). Escapes are undone; a \u escape of a surrogate and invalid
// UTF-8 (which encoding/json replaces with U+FFFD) are left to
// json.Unmarshal.
func (s *recScanner) str(common []string) (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	j := start
	ascii := true
	for ; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if j >= len(s.b) || s.b[j] < 0x20 {
		return "", false
	}
	if s.b[j] == '"' {
		if !ascii && !utf8.Valid(s.b[start:j]) {
			return "", false
		}
		s.i = j + 1
		for _, c := range common {
			if string(s.b[start:j]) == c {
				return c, true
			}
		}
		return string(s.b[start:j]), true
	}
	return s.escaped(start, j, ascii)
}

// escaped is str's slow path, for a string with an escape: the string's
// content starts at start, and j is its first escape (ascii: whether what
// came before it was ASCII only). It undoes the escapes into s.buf.
func (s *recScanner) escaped(start, j int, ascii bool) (string, bool) {
	// Escapes: copy what came before and undo them.
	buf := append(s.buf[:0], s.b[start:j]...)
	for j < len(s.b) {
		c := s.b[j]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(s.b[start:j]) {
				return "", false
			}
			s.i, s.buf = j+1, buf
			return string(buf), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if j+1 >= len(s.b) {
				return "", false
			}
			switch e := s.b[j+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(s.b[j+2:])
				if !ok || utf8.RuneLen(r) < 0 { // not 4 hex digits, or a surrogate
					return "", false
				}
				buf = utf8.AppendRune(buf, r)
				j += 4
			default:
				return "", false
			}
			j += 2
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			buf = append(buf, c)
			j++
		}
	}
	return "", false
}

// hex4 reads the 4 hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// digits reads an integer written as JSON writes one (-?(0|[1-9][0-9]*)),
// without a fraction or exponent, that fits in 64 bits: its magnitude and
// sign. Anything else (including a following '.', 'e' or digit, which the
// caller's check of the next byte refuses) is left to json.Unmarshal.
func (s *recScanner) digits() (mag uint64, neg, ok bool) {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		neg = true
		j++
	}
	start := j
	for ; j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9'; j++ {
		d := uint64(s.b[j] - '0')
		if mag > (math.MaxUint64-d)/10 {
			return 0, false, false
		}
		mag = mag*10 + d
	}
	if j == start || (s.b[start] == '0' && j-start > 1) {
		return 0, false, false
	}
	s.i = j
	return mag, neg, true
}

func (s *recScanner) uint(p *uint64) bool {
	mag, neg, ok := s.digits()
	if !ok || neg {
		return false
	}
	*p = mag
	return true
}

func (s *recScanner) int(p *int64) bool {
	v, ok := s.int64()
	if ok {
		*p = v
	}
	return ok
}

func (s *recScanner) int64() (int64, bool) {
	mag, neg, ok := s.digits()
	switch {
	case !ok:
		return 0, false
	case neg && mag <= 1<<63:
		return -int64(mag-1) - 1, true
	case !neg && mag <= math.MaxInt64:
		return int64(mag), true
	}
	return 0, false
}

func (s *recScanner) intNative(p *int) bool {
	v, ok := s.int64()
	if !ok || v < math.MinInt || v > math.MaxInt {
		return false
	}
	*p = int(v)
	return true
}

// intPtr sets *p as encoding/json does: into the value it points to, or a
// new one.
func (s *recScanner) intPtr(p **int64) bool {
	v, ok := s.int64()
	if !ok {
		return false
	}
	if *p == nil {
		*p = new(int64)
	}
	**p = v
	return true
}

func (s *recScanner) bool(p *bool) bool {
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*p, s.i = true, s.i+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*p, s.i = false, s.i+5
	default:
		return false
	}
	return true
}

// id reads an id through jsonrpc.ID's own UnmarshalJSON, as encoding/json
// calls it (null, which encoding/json turns into a nil pointer, is left to
// it).
func (s *recScanner) id(p **jsonrpc.ID) bool {
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '"' {
		if _, ok := s.str(nil); !ok {
			return false
		}
	} else if _, _, ok := s.digits(); !ok {
		return false
	}
	if *p == nil {
		*p = new(jsonrpc.ID)
	}
	return (*p).UnmarshalJSON(s.b[start:s.i]) == nil
}

// nested decodes a nested value with json.Unmarshal on its own bytes (which
// fills a field exactly as decoding the whole line would).
func (s *recScanner) nested(v any) bool {
	start := s.i
	if !s.skip(0) {
		return false
	}
	return json.Unmarshal(s.b[start:s.i], v) == nil
}

// skip moves past one value, finding its end by its brackets and strings
// (json.Unmarshal of the bytes then checks them).
func (s *recScanner) skip(depth int) bool {
	if s.i >= len(s.b) || depth > maxNest {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		end := quoteEnd(s.b, s.i+1)
		if end < 0 {
			return false
		}
		s.i = end
		return true
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		for {
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case closer:
				s.i++
				return true
			case ',', ':':
				s.i++
			default:
				if !s.skip(depth + 1) {
					return false
				}
			}
		}
	default:
		j := s.i
	scan:
		for j < len(s.b) {
			switch s.b[j] {
			case ',', '}', ']', ':', ' ', '\t', '\n', '\r', '"', '{', '[':
				break scan
			}
			j++
		}
		if j == s.i {
			return false
		}
		s.i = j
		return true
	}
}

// quoteEnd returns the position just after the quote that closes the
// string whose text starts at i (the first quote not escaped: preceded by
// an even number of backslashes), or -1.
func quoteEnd(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}
