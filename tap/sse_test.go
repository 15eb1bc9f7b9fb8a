package tap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
)

// sseNote is a notification the tests' streams carry.
const sseNote = `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`

// sseThrough serves stream as an SSE answer to GET /s behind a tap (with
// the fault rule, when given) and returns the body the host read and what
// the tap observed.
func sseThrough(t *testing.T, stream, rule string) (string, []client.Event) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	opts := ProxyOptions{Target: target, LoopbackOnly: true}
	if rule != "" {
		r, err := chaos.Parse(rule, 1)
		if err != nil {
			t.Fatal(err)
		}
		opts.Faults = chaos.New([]*chaos.Rule{r}, 1)
	}
	base, _, done := serveProxy(t, opts)
	resp, err := http.Get(base + "/s")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(body), done()
}

// TestSSEIDWithNUL: an id with a NUL is ignored, as the standard says: the
// message is recorded without it (the tap's own splitter used to keep it).
func TestSSEIDWithNUL(t *testing.T) {
	_, evs := sseThrough(t, "id: a\x00b\ndata: "+sseNote+"\n\n", "")
	n := 0
	for _, ev := range evs {
		if ev.Kind == client.EvFrame {
			n++
			if ev.Frame.Frame.EventID != "" {
				t.Errorf("event id %q recorded", ev.Frame.Frame.EventID)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d frames, want the one message", n)
	}
}

// TestSSEEventType: the fault rules apply to message events only, their
// type read as the standard reads it: one space after "event:" dropped
// (so "event:  message" is " message", not a message), the last event
// line winning.
func TestSSEEventType(t *testing.T) {
	for _, c := range []struct {
		stream  string
		message bool
	}{
		{"event:  message\ndata: " + sseNote + "\n\n", false},
		{"event: message\nevent: other\ndata: " + sseNote + "\n\n", false},
		{"event: other\nevent: message\ndata: " + sseNote + "\n\n", true},
		{"event:message\ndata: " + sseNote + "\n\n", true},
	} {
		body, _ := sseThrough(t, c.stream, "drop:to-host")
		if dropped := body == ""; dropped != c.message {
			t.Errorf("%q: read %q; want it dropped: %v", c.stream, body, c.message)
		} else if !c.message && body != c.stream {
			t.Errorf("%q: changed to %q", c.stream, body)
		}
	}
}

// TestSSEEventTypeObserved: the observer reads the type the same way: an
// event typed " message" is shown as an SSE event, not a message.
func TestSSEEventTypeObserved(t *testing.T) {
	_, evs := sseThrough(t, "event:  message\ndata: "+sseNote+"\n\n", "")
	shown := false
	for _, ev := range evs {
		if ev.Kind == client.EvFrame {
			t.Errorf("recorded as a message: %+v", ev.Frame)
		}
		if ev.Kind == client.EvHTTP && strings.HasPrefix(ev.HTTP.Note, "SSE event  message: ") {
			shown = true
		}
	}
	if !shown {
		t.Errorf("no SSE event shown")
	}
}
