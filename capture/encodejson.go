package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// recordJSON appends rec as one line of JSON, byte for byte what a
// json.Encoder with HTML escaping off writes for it (the newline included):
// the members in Record's order, the empty ones left out, strings escaped
// as encoding/json escapes them. The recorder writes every event through
// it: encoding/json's reflection over Record's thirty fields was most of
// the recording's cost. The nested values of the rarer records (progress,
// error, exit, http, decode_error, fault) go through encoding/json
// (encode). TestRecordJSONMatchesEncodingJSON and FuzzRecordJSON hold the
// two equal.
type recordJSON struct {
	scratch bytes.Buffer
	enc     *json.Encoder // into scratch, HTML escaping off
	err     error         // of a nested value, until append returns it
}

func newRecordJSON() *recordJSON {
	rj := &recordJSON{}
	rj.enc = json.NewEncoder(&rj.scratch)
	rj.enc.SetEscapeHTML(false)
	return rj
}

// member appends a member's prefix: `,"key":`, written out whole by the
// caller (every member but the first, "type", has its comma).
func member(b []byte, prefix string) []byte { return append(b, prefix...) }

func strMember(b []byte, prefix, v string) []byte {
	if v == "" {
		return b
	}
	return appendJSONString(member(b, prefix), v)
}

func intMember(b []byte, prefix string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(member(b, prefix), v, 10)
}

func uintMember(b []byte, prefix string, v uint64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendUint(member(b, prefix), v, 10)
}

func boolMember(b []byte, prefix string, v bool) []byte {
	if !v {
		return b
	}
	return append(member(b, prefix), "true"...)
}

func ptrMember(b []byte, prefix string, v *int64) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(member(b, prefix), *v, 10)
}

func idMember(b []byte, prefix string, id *jsonrpc.ID) []byte {
	if id == nil {
		return b
	}
	raw, _ := id.MarshalJSON() // never fails; already compact
	return append(member(b, prefix), raw...)
}

// encode returns v as a json.Encoder with HTML escaping off writes it,
// newline included; valid until the next call. The recorder's header goes
// through it too.
func (rj *recordJSON) encode(v any) ([]byte, error) {
	rj.scratch.Reset()
	if err := rj.enc.Encode(v); err != nil {
		return nil, err
	}
	return rj.scratch.Bytes(), nil
}

// nested appends v as encoding/json encodes it when set (v is then a
// non-nil pointer); the first error is kept for append to return.
func (rj *recordJSON) nested(b []byte, prefix string, set bool, v any) []byte {
	if !set || rj.err != nil {
		return b
	}
	out, err := rj.encode(v)
	if err != nil {
		rj.err = err
		return b
	}
	return append(member(b, prefix), out[:len(out)-1]...) // without the newline
}

// append appends rec's line to b, with raw (when not nil) as its Raw: the
// bytes escaped, or base64, straight from them.
func (rj *recordJSON) append(b []byte, rec *Record, raw *bigRaw) ([]byte, error) {
	b = appendJSONString(append(b, `{"type":`...), rec.Type)
	b = uintMember(b, `,"seq":`, rec.Seq)
	b = strconv.AppendInt(member(b, `,"t":`), rec.T, 10)
	b = strMember(b, `,"dir":`, rec.Dir)
	b = idMember(b, `,"id":`, rec.ID)
	b = strMember(b, `,"method":`, rec.Method)
	b = strMember(b, `,"kind":`, rec.Kind)
	switch {
	case raw == nil || len(raw.b) == 0:
		b = strMember(b, `,"raw":`, rec.Raw)
	case raw.b64:
		b = append(member(b, `,"raw":`), '"')
		b = append(base64.StdEncoding.AppendEncode(b, raw.b), '"')
	default:
		b = appendJSONString(member(b, `,"raw":`), raw.b)
	}
	b = boolMember(b, `,"b64":`, rec.B64)
	b = intMember(b, `,"size":`, int64(rec.Size))
	b = strMember(b, `,"verdict":`, rec.Verdict)
	b = strMember(b, `,"detail":`, rec.Detail)
	b = rj.nested(b, `,"decode_error":`, rec.Decode != nil, rec.Decode)
	b = boolMember(b, `,"redacted":`, rec.Redacted)
	b = strMember(b, `,"stream":`, rec.Stream)
	b = strMember(b, `,"event_id":`, rec.EventID)
	b = strMember(b, `,"tool":`, rec.Tool)
	b = strMember(b, `,"state":`, rec.State)
	b = ptrMember(b, `,"deadline":`, rec.Deadline)
	b = intMember(b, `,"timeout":`, rec.Timeout)
	b = ptrMember(b, `,"max_end":`, rec.MaxEnd)
	b = intMember(b, `,"latency":`, rec.Latency)
	b = rj.nested(b, `,"progress":`, rec.Progress != nil, rec.Progress)
	b = rj.nested(b, `,"error":`, rec.Err != nil, rec.Err)
	b = idMember(b, `,"retry_of":`, rec.RetryOf)
	b = strMember(b, `,"params":`, rec.Params)
	b = strMember(b, `,"data":`, rec.Data)
	b = strMember(b, `,"what":`, rec.What)
	b = intMember(b, `,"pid":`, int64(rec.Pid))
	if len(rec.Argv) > 0 {
		b = append(member(b, `,"argv":`), '[')
		for i, a := range rec.Argv {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a)
		}
		b = append(b, ']')
	}
	b = strMember(b, `,"signal":`, rec.Signal)
	b = rj.nested(b, `,"exit":`, rec.Exit != nil, rec.Exit)
	b = strMember(b, `,"note":`, rec.Note)
	b = rj.nested(b, `,"fault":`, rec.Fault != nil, rec.Fault)
	b = rj.nested(b, `,"hold":`, rec.Hold != nil, rec.Hold)
	b = rj.nested(b, `,"http":`, rec.HTTP != nil, rec.HTTP)
	b = strMember(b, `,"protocol_version":`, rec.ProtocolVersion)
	b = strMember(b, `,"server_name":`, rec.ServerName)
	b = strMember(b, `,"server_version":`, rec.ServerVersion)
	b = uintMember(b, `,"count":`, rec.Count)
	b = uintMember(b, `,"after_seq":`, rec.AfterSeq)
	b = uintMember(b, `,"events":`, rec.Events)
	b = uintMember(b, `,"missed":`, rec.Missed)
	err := rj.err
	rj.err = nil
	return append(b, '}', '\n'), err
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off (invalid UTF-8 becomes U+FFFD).
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, jsonEscapes[c]...)
			i++
			start = i
			continue
		}
		// As encoding/json does: a short piece converted on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		var esc string
		switch {
		case r == utf8.RuneError && size == 1:
			esc = `\ufffd`
		case r == '\u2028':
			esc = lineSep
		case r == '\u2029':
			esc = paraSep
		}
		if esc != "" {
			b = append(b, s[start:i]...)
			b = append(b, esc...)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonPlain[c] is whether encoding/json writes the ASCII byte c as it is
// in a string (jsonEscapes[c] is empty).
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = jsonEscapes[c] == ""
	}
	return t
}()
