package tap

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// bombBytes is what the bombs decode to: far over the proxy's cap in the
// tests (bombCap).
const (
	bombBytes = 16 << 20
	bombCap   = 256 << 10
)

// compress encodes parts (each flushed: an SSE event each) with enc:
// gzip, deflate (zlib) or raw-deflate.
func compress(t testing.TB, enc string, parts ...string) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		io.Writer
		Flush() error
		Close() error
	}
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "raw-deflate":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	}
	var out [][]byte
	for i, p := range parts {
		io.WriteString(w, p)
		if i == len(parts)-1 {
			w.Close()
		} else {
			w.Flush()
		}
		out = append(out, bytes.Clone(buf.Bytes()))
		buf.Reset()
	}
	return out
}

// bomb is a gzip body that decodes to head, bombBytes of 'a', then tail.
func bomb(t testing.TB, head, tail string) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	io.WriteString(w, head)
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for range bombBytes / len(chunk) {
		w.Write(chunk)
	}
	io.WriteString(w, tail)
	w.Close()
	return buf.Bytes()
}

// compressedUpstream answers each path with a compressed body, written
// a part at a time (flushed between), and keeps what it wrote and what
// it received.
type compressedUpstream struct {
	srv     *httptest.Server
	mu      sync.Mutex
	wrote   map[string][]byte
	got     map[string][]byte
	bodies  map[string][][]byte
	encs    map[string]string
	ctypes  map[string]string
	release chan struct{} // the second part of /sse waits for it
}

func (u *compressedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.got[r.URL.Path] = b
	parts, enc, ctype := u.bodies[r.URL.Path], u.encs[r.URL.Path], u.ctypes[r.URL.Path]
	u.mu.Unlock()
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Encoding", enc)
	for i, p := range parts {
		if i == 1 && r.URL.Path == "/sse" {
			<-u.release
		}
		w.Write(p)
		w.(http.Flusher).Flush()
		u.mu.Lock()
		u.wrote[r.URL.Path] = append(u.wrote[r.URL.Path], p...)
		u.mu.Unlock()
	}
}

// TestProxyCompressed: bodies with Content-Encoding gzip or deflate (zlib,
// and the raw deflate some servers send) reach the host byte for byte,
// compressed as the server sent them, and are observed decoded: a JSON
// answer, a compressed request body, and an SSE stream whose first event
// is observed while the server still holds the second. A decompression
// bomb (16 MiB from about 16 KiB), as a JSON body and as an SSE event, is
// recorded as too long (the cap: 256 KiB) without the observer's memory
// growing with it; a body that is not what its encoding says is noted as
// undecodable; a coding the tap does not decode (br) is noted as before.
func TestProxyCompressed(t *testing.T) {
	const sseCall = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":7}}}`
	up := &compressedUpstream{wrote: map[string][]byte{}, got: map[string][]byte{}, release: make(chan struct{}),
		bodies: map[string][][]byte{
			"/gzip":        compress(t, "gzip", `{"jsonrpc":"2.0","id":1,"result":{"via":"gzip"}}`),
			"/deflate":     compress(t, "deflate", `{"jsonrpc":"2.0","id":2,"result":{"via":"deflate"}}`),
			"/raw-deflate": compress(t, "raw-deflate", `{"jsonrpc":"2.0","id":3,"result":{"via":"raw"}}`),
			"/sse": compress(t, "gzip",
				"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1}}\n\n",
				"id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n"),
			"/bomb":     {bomb(t, `{"jsonrpc":"2.0","id":6,"result":{"x":"`, `"}}`)},
			"/sse-bomb": {bomb(t, "data: ", "")},
			"/bad":      {[]byte("this is not gzip")},
			"/br":       {[]byte("\x0b\x02\x80{}\x03")},
		},
		encs: map[string]string{"/gzip": "gzip", "/deflate": "deflate", "/raw-deflate": "deflate", "/sse": "gzip",
			"/bomb": "gzip", "/sse-bomb": "gzip", "/bad": "gzip", "/br": "br"},
		ctypes: map[string]string{"/gzip": "application/json", "/deflate": "application/json", "/raw-deflate": "application/json",
			"/sse": "text/event-stream", "/bomb": "application/json", "/sse-bomb": "text/event-stream", "/bad": "application/json", "/br": "application/json"},
	}
	up.srv = httptest.NewServer(up)
	t.Cleanup(up.srv.Close)
	target, _ := url.Parse(up.srv.URL)
	base, _, done := serveProxy(t, ProxyOptions{Target: target, MaxMessageBytes: bombCap})
	// The host asks for compression itself, and gets the bytes as they
	// came (its transport would otherwise decode them).
	hc := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(hc.CloseIdleConnections)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	post := func(path string, body []byte, enc string, read func(io.Reader) []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", "gzip, deflate")
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got := read(resp.Body)
		up.mu.Lock()
		defer up.mu.Unlock()
		if want := bytes.Join(up.bodies[path], nil); !bytes.Equal(got, want) {
			t.Errorf("%s: the host got %d bytes, not the %d the server wrote", path, len(got), len(want))
		}
		if !bytes.Equal(up.got[path], body) {
			t.Errorf("%s: the server got %q, want %q", path, up.got[path], body)
		}
	}
	readAll := func(r io.Reader) []byte { b, _ := io.ReadAll(r); return b }
	gzCall := compress(t, "gzip", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)[0]
	post("/gzip", gzCall, "gzip", readAll)
	post("/deflate", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "", readAll)
	post("/raw-deflate", []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), "", readAll)
	post("/sse", []byte(sseCall), "", func(r io.Reader) []byte {
		// The first event's bytes reach the host while the server holds
		// the second: nothing is held back for decoding.
		first := readWithin(t, r, len(up.bodies["/sse"][0]), "the first compressed SSE event")
		close(up.release)
		return append(first, readAll(r)...)
	})
	post("/bomb", []byte(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x"}}`), "", readAll)
	post("/sse-bomb", []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"y"}}`), "", readAll)
	post("/bad", []byte(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"z"}}`), "", readAll)
	post("/br", []byte(`{"jsonrpc":"2.0","id":11,"method":"ping"}`), "", readAll)

	evs := done()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// Had either bomb been decoded into memory, 16 MiB (and more, as
	// the buffer grew) would have been allocated for it.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("%d MiB allocated while the bombs went by", grew>>20)
	}
	var frames, notes []string
	for _, ev := range evs {
		switch ev.Kind {
		case client.EvFrame:
			f := ev.Frame
			frames = append(frames, fmt.Sprintf("%s %s %s %s", f.Dir, f.Frame.Stream, f.Frame.EventID, f.Verdict))
		case client.EvNote:
			notes = append(notes, ev.Note)
		}
	}
	want := []string{
		"out POST 1  sent", "in POST 1  resolved",
		"out POST 2  sent", "in POST 2  resolved",
		"out POST 3  sent", "in POST 3  resolved",
		"out POST 4  sent", "in POST 4 e1 progress", "in POST 4 e2 resolved",
		"out POST 5  sent", "in   too-long",
		"out POST 6  sent", "in   too-long",
		"out POST 7  sent",
		"out POST 8  sent",
	}
	if strings.Join(frames, "\n") != strings.Join(want, "\n") {
		t.Logf("notes:\n%s", strings.Join(notes, "\n"))
		t.Errorf("observed frames:\n%s\nwant\n%s", strings.Join(frames, "\n"), strings.Join(want, "\n"))
	}
	// Each note once.
	count := map[string]int{
		"an event of the SSE stream of POST 6 (Content-Encoding gzip) decodes to more than 262144 bytes": 0,
		"a body of POST 7 with Content-Encoding gzip could not be decoded":                               0,
		"POST 8 answered a body with Content-Encoding br: forwarded as it is, not decoded":               0,
	}
	for _, n := range notes {
		for k := range count {
			if strings.Contains(n, k) {
				count[k]++
			}
		}
	}
	for k, c := range count {
		if c != 1 {
			t.Errorf("%d notes %q, want 1; notes:\n%s", c, k, strings.Join(notes, "\n"))
		}
	}
}

// TestInflaterStops: a decoder stopped mid-body (a gap in what was
// observed, or the end of observation) returns, and feeding it after that
// is harmless.
func TestInflaterStops(t *testing.T) {
	parts := compress(t, "gzip", "first part ", "second part")
	f := newInflater("gzip")
	var got []byte
	use := func(d []byte) bool { got = append(got, d...); return true }
	if fin, err := f.feed(parts[0], false, use); fin || err != nil {
		t.Fatalf("after the first part: finished %v, %v", fin, err)
	}
	if string(got) != "first part " {
		t.Fatalf("decoded %q after the first flushed part", got)
	}
	f.close()
	if fin, err := f.feed(parts[1], false, use); !fin || err != nil {
		t.Fatalf("after close: finished %v, %v", fin, err)
	}
	f.close()

	// A body cut short is an error; a whole one is not.
	f = newInflater("gzip")
	f.feed(parts[0], false, use)
	if _, err := f.feed(nil, true, use); err == nil {
		t.Error("a body cut short decoded without an error")
	}
	f = newInflater("gzip")
	got = nil
	f.feed(parts[0], false, use)
	f.feed(parts[1], false, use)
	if fin, err := f.feed(nil, true, use); !fin || err != nil || string(got) != "first part second part" {
		t.Errorf("whole body: finished %v, %v, %q", fin, err, got)
	}
}

// FuzzInflater: whatever bytes a server sends under gzip or deflate, cut
// anywhere, the decoder finishes (with or without an error) when the body
// ends, hands on no more than it is let, and leaves no goroutine.
func FuzzInflater(f *testing.F) {
	for _, enc := range []string{"gzip", "deflate", "raw-deflate"} {
		f.Add(bytes.Join(compress(f, enc, "data: one\n\n", "data: two\n\n"), nil), uint8(3), enc == "gzip")
	}
	f.Add([]byte("not compressed"), uint8(1), true)
	f.Fuzz(func(t *testing.T, body []byte, cut uint8, gz bool) {
		enc := "deflate"
		if gz {
			enc = "gzip"
		}
		inf := newInflater(enc)
		defer inf.close()
		step := int(cut)%64 + 1
		var n int
		use := func(d []byte) bool { n += len(d); return n < 1<<20 }
		for len(body) > 0 {
			k := min(step, len(body))
			if fin, _ := inf.feed(body[:k], false, use); fin {
				return
			}
			body = body[k:]
		}
		if fin, _ := inf.feed(nil, true, use); !fin {
			t.Fatal("not finished at the body's end")
		}
	})
}
