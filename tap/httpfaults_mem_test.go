package tap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/memtest"
)

// TestHTTPFaultsDuplicateMemoryBounded: over HTTP, the largest duplicate
// count (n=1000) on a 256 KiB JSON answer reaches the host as an SSE
// stream of 1,001 events (256 MB) written one after another as the host
// reads: the heap in use never holds them all (under 64 MiB above what it
// held before; before, the tap built the whole stream in one buffer).
func TestHTTPFaultsDuplicateMemoryBounded(t *testing.T) {
	const copies, size = chaos.MaxCopies, 256 << 10
	target, _ := url.Parse(fixturetest.ServeHTTP(t, "--http-json"))
	r, err := chaos.Parse(fmt.Sprintf("duplicate:to-host,tool=big,n=%d", copies), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProxy(ProxyOptions{Target: target, LoopbackOnly: true, Faults: chaos.New([]*chaos.Rule{r}, 1)})
	srv := httptest.NewServer(p)
	defer func() { srv.CloseClientConnections(); srv.Close(); p.Close() }()
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	var events, bytesRead int
	use := memtest.Measure(func() {
		resp := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, size))
		defer resp.Body.Close()
		rd := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			line, err := rd.ReadSlice('\n')
			bytesRead += len(line)
			if bytes.HasPrefix(line, []byte("data: ")) {
				events++
			}
			if err == io.EOF {
				break
			}
			if err != nil && err != bufio.ErrBufferFull {
				t.Fatal(err)
			}
		}
	})
	t.Logf("%d events, %.1f MB read; heap peak %.1f MiB above before", events, float64(bytesRead)/1e6, float64(use.Peak)/(1<<20))
	if events != copies+1 || bytesRead < copies*size {
		t.Errorf("%d events (%d bytes), want %d", events, bytesRead, copies+1)
	}
	if use.Peak > 64<<20 {
		t.Errorf("heap peak %.1f MiB above before, want under 64 MiB", float64(use.Peak)/(1<<20))
	}
}

// TestHTTPFaultsClosedBounded: the sessions close rules ended are
// remembered by their ids' hashes, the newest maxClosed: an id as long as
// a header allows costs 32 bytes, and a host that makes sessions without
// end does not grow the map.
func TestHTTPFaultsClosedBounded(t *testing.T) {
	f := &httpFaults{closed: map[[32]byte]int{}}
	long := strings.Repeat("s", 4<<10)
	for i := range maxClosed + 10 {
		f.closeSession(fmt.Sprint(i, long), 1)
	}
	if len(f.closed) != maxClosed || len(f.order) != maxClosed {
		t.Fatalf("%d remembered (%d in order), want %d", len(f.closed), len(f.order), maxClosed)
	}
	ask := func(i int) int {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Mcp-Session-Id", fmt.Sprint(i, long))
		return f.sessionClosed(r)
	}
	if ask(0) != 0 || ask(maxClosed+9) != 1 {
		t.Errorf("the oldest %d, the newest %d", ask(0), ask(maxClosed+9))
	}
}
