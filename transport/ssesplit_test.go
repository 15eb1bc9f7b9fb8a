package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// splitSSE feeds in to a splitter of events of at most max bytes, step
// bytes at a time, and returns what it emitted (the end included).
func splitSSE(in []byte, step, max int) (evs []SSEEvent, errs []error) {
	s := NewSSESplitter(max)
	emit := func(ev SSEEvent, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		evs = append(evs, ev)
	}
	for len(in) > 0 {
		n := min(step, len(in))
		s.Feed(in[:n], emit)
		if p := s.Pending(); len(p) > max {
			panic("splitter holds more than its cap")
		}
		in = in[n:]
	}
	s.End(emit)
	return evs, errs
}

// sameEvent reports whether a and b are the same event; a's Raw may lack
// the "\n" of a "\r\n" that ended it (the "\r" dispatched it at once).
func sameEvent(a, b SSEEvent) bool {
	ra, rb := a.Raw, b.Raw
	if !bytes.Equal(ra, rb) && !bytes.Equal(append(ra[:len(ra):len(ra)], '\n'), rb) {
		return false
	}
	a.Raw, b.Raw = nil, nil
	return a.Event == b.Event && a.ID == b.ID && a.HasID == b.HasID && bytes.Equal(a.Data, b.Data) &&
		a.HasData == b.HasData && a.Retry == b.Retry && a.HasRetry == b.HasRetry && a.Comments == b.Comments &&
		len(a.Unknown) == len(b.Unknown)
}

// TestSSESplitterChunks: events split across chunks at every byte, with
// every line end, give the same events as the whole stream.
func TestSSESplitterChunks(t *testing.T) {
	stream := []byte("id: e1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n" +
		": a comment\ndata: {\"id\":8,\ndata:   \"result\":{}}\n\n" + "event: endpoint\rdata: /m\r\r")
	whole, _ := splitSSE(stream, len(stream), 1<<20)
	if len(whole) != 3 || whole[0].ID != "e1" || string(whole[1].Data) != "{\"id\":8,\n  \"result\":{}}" || whole[2].Event != "endpoint" {
		t.Fatalf("events: %+v", whole)
	}
	if string(whole[0].Raw) != "id: e1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n" {
		t.Fatalf("raw %q", whole[0].Raw)
	}
	for cut := 1; cut < len(stream); cut++ {
		var got []SSEEvent
		s := NewSSESplitter(1 << 20)
		emit := func(e SSEEvent, err error) { got = append(got, e) }
		s.Feed(stream[:cut], emit)
		s.Feed(stream[cut:], emit)
		s.End(emit)
		if len(got) != len(whole) {
			t.Fatalf("cut at %d: %d events, want %d", cut, len(got), len(whole))
		}
		for i := range got {
			if !sameEvent(got[i], whole[i]) {
				t.Fatalf("cut at %d: event %d %+v, want %+v", cut, i, got[i], whole[i])
			}
		}
	}
}

// TestSSESplitterCap: an event over the cap is reported once, as soon as
// it passes it, with its first bytes; the events after it are whole.
func TestSSESplitterCap(t *testing.T) {
	in := "data: " + strings.Repeat("x", 100) + "\ndata: more\n\ndata: ok\n\n"
	evs, errs := splitSSE([]byte(in), 7, 64)
	var long *SSEEventTooLongError
	if len(errs) != 1 || !errors.As(errs[0], &long) || long.Limit != 64 || !strings.HasPrefix(in, string(long.Prefix)) || len(long.Prefix) == 0 {
		t.Fatalf("errors %v", errs)
	}
	if len(evs) != 1 || string(evs[0].Data) != "ok" {
		t.Fatalf("events %+v", evs)
	}
	// An event of exactly the cap (its blank line included) passes.
	ok := "data: " + strings.Repeat("y", 56) + "\n\n"
	if evs, errs := splitSSE([]byte(ok), 5, len(ok)); len(evs) != 1 || len(errs) != 0 {
		t.Fatalf("%d bytes, cap %d: %+v %v", len(ok), len(ok), evs, errs)
	}
	if _, errs := splitSSE([]byte(ok), 5, len(ok)-1); len(errs) != 1 {
		t.Fatalf("%d bytes, cap %d: %v", len(ok), len(ok)-1, errs)
	}
	// A stream cut inside an event: not dispatched, its bytes kept.
	_, errs = splitSSE([]byte("data: a\n\nid: 2\ndata: cut"), 3, 64)
	var inc *SSEIncompleteError
	if len(errs) != 1 || !errors.As(errs[0], &inc) || string(inc.Raw) != "id: 2\ndata: cut" {
		t.Fatalf("cut: %v", errs)
	}
}

// FuzzSSESplitter: whatever the stream and however it is cut into chunks,
// the splitter gives the events it gives for the whole stream, the same
// as SSEReader's, and never holds more than its cap.
func FuzzSSESplitter(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\r\ndata:  b\r\n\r\n", "id: 1\nevent: x\ndata\n\n",
		": c\ndata: x\r\r", "id: a\x00b\ndata: x\n\n", "event:  message\ndata: x\n\n",
		"\xEF\xBB\xBFdata: x\n\n", "data: x\n\ndata: cut", "retry: 10\nfoo\n\n\n\r\n",
		"data: " + strings.Repeat("z", 80) + "\n\ndata: after\n\n",
	} {
		f.Add([]byte(s), uint8(3), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, step, capSel uint8) {
		max := 1 << 20
		if capSel%2 == 1 {
			max = 16 + int(capSel)
		}
		whole, wholeErrs := splitSSE(in, len(in)+1, max)
		got, errs := splitSSE(in, int(step)%7+1, max)
		if len(got) != len(whole) || len(errs) != len(wholeErrs) {
			t.Fatalf("%q in steps of %d: %d events %v, whole %d %v", in, int(step)%7+1, len(got), errs, len(whole), wholeErrs)
		}
		for i := range got {
			if !sameEvent(got[i], whole[i]) {
				t.Fatalf("%q: event %d: %+v, whole %+v", in, i, got[i], whole[i])
			}
			if len(got[i].Raw) > max {
				t.Fatalf("%q: event of %d bytes, cap %d", in, len(got[i].Raw), max)
			}
		}
		if max < len(in) {
			return // the reader stops at a long event; the splitter goes on
		}
		r := NewSSEReader(bytes.NewReader(in), max)
		for i := 0; ; i++ {
			ev, err := r.Next()
			if err != nil {
				if i != len(whole) || (err == io.EOF) != (len(wholeErrs) == 0) {
					t.Fatalf("%q: reader gave %d events then %v; splitter %d, %v", in, i, err, len(whole), wholeErrs)
				}
				break
			}
			if i >= len(whole) || !sameEvent(whole[i], ev) {
				t.Fatalf("%q: event %d: reader %+v, splitter %+v", in, i, ev, whole)
			}
		}
	})
}

// FuzzAppendSSEEvent: whatever event ParseSSEEvent reads, the event
// AppendSSEEvent writes of it is framed whole by SSEEventEnd and reads
// back the same (type, id, retry, data).
func FuzzAppendSSEEvent(f *testing.F) {
	f.Add([]byte("id: e1\r\nevent: message\r\ndata: {\"a\":1}\r\n\r\n"))
	f.Add([]byte(": comment\ndata: one\ndata:two\ndata\nretry: 5\n\n"))
	f.Add([]byte("event: endpoint\ndata: /message?x=1\n\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, ok := ParseSSEEvent(raw, true)
		if !ok || (ev.Event == "" && !ev.HasID && !ev.HasRetry && !ev.HasData) {
			return // nothing the writer writes (comments, unknown lines)
		}
		b := AppendSSEEvent(nil, &ev)
		if SSEEventEnd(b) != len(b) {
			t.Fatalf("written event %q does not end where it should", b)
		}
		again, ok := ParseSSEEvent(b, false)
		if !ok || again.Event != ev.Event || again.ID != ev.ID || again.HasID != ev.HasID || again.Retry != ev.Retry ||
			again.HasRetry != ev.HasRetry || again.HasData != ev.HasData || !bytes.Equal(again.Data, ev.Data) {
			t.Fatalf("%q read %+v, written %q, read again %+v", raw, ev, b, again)
		}
	})
}

// TestReplaceSSEData: the other lines stay, in place, with their line
// ends; the data takes the first data line's place and style.
func TestReplaceSSEData(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"event: endpoint\r\ndata: /old\r\n\r\n", "event: endpoint\r\ndata: NEW\r\n\r\n"},
		{"data:/a\rdata: /b\revent:endpoint\r\r", "data:NEW\revent:endpoint\r\r"},
		{"\xEF\xBB\xBFdata: /a\n: c\n\n", "\xEF\xBB\xBFdata: NEW\n: c\n\n"},
		{"id: 1\ndatum: x\n\n", "id: 1\ndatum: x\n\n"},
	} {
		if got := ReplaceSSEData([]byte(c.in), true, []byte("NEW")); string(got) != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
