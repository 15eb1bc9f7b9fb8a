package tap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestProxyOrigin: over real loopback sockets, a request whose Origin is
// not loopback (another site, "null" from a sandboxed page or a file, a
// name that only starts like loopback) gets 403 from the tap and never
// reaches the server, whatever its method (two Origin headers are
// refused too); no Origin (a host that is not
// a browser), a loopback Origin and one named by AllowOrigins are
// forwarded. The refusal is said on the log.
func TestProxyOrigin(t *testing.T) {
	var seen atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	log := &proctest.Buffer{}
	base, _, _ := serveProxy(t, ProxyOptions{Target: target, LoopbackOnly: true, AllowOrigins: []string{"https://Inspector.example:443"}, Log: log})
	for _, tc := range []struct {
		origin string
		method string
		want   int
	}{
		{"http://evil.example", http.MethodPost, http.StatusForbidden},
		{"null", http.MethodPost, http.StatusForbidden},
		{"http://127.0.0.1.evil.example:8808", http.MethodPost, http.StatusForbidden},
		{"http://localhost.evil.example", http.MethodGet, http.StatusForbidden},
		{"https://inspector.example.evil", http.MethodPost, http.StatusForbidden},
		{"http://evil.example", http.MethodDelete, http.StatusForbidden},
		{"http://evil.example", http.MethodOptions, http.StatusForbidden},
		{"", http.MethodPost, http.StatusOK},
		{"http://localhost:6274", http.MethodPost, http.StatusOK},
		{"http://127.0.0.1:9", http.MethodPost, http.StatusOK},
		{"http://[::1]:9", http.MethodPost, http.StatusOK},
		{"https://inspector.example", http.MethodPost, http.StatusOK},
	} {
		before := seen.Load()
		req, _ := http.NewRequest(tc.method, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := seen.Load() - before
		if tc.want == http.StatusForbidden && (resp.StatusCode != tc.want || got != 0) {
			t.Errorf("%s with Origin %q: %d (the server saw it: %v), want 403 and nothing sent on", tc.method, tc.origin, resp.StatusCode, got != 0)
		}
		if tc.want == http.StatusOK && (resp.StatusCode != tc.want || got != 1) {
			t.Errorf("%s with Origin %q: %d (the server saw it: %v), want it forwarded", tc.method, tc.origin, resp.StatusCode, got != 0)
		}
	}
	// Two Origin headers are never one page's.
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{}`))
	req.Header["Origin"] = []string{"http://localhost", "http://evil.example"}
	before := seen.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || seen.Load() != before {
		t.Errorf("two Origin headers: %d, want 403 and nothing sent on", resp.StatusCode)
	}
	if !strings.Contains(log.String(), `refused a request with Origin "http://evil.example"`) {
		t.Errorf("the log does not say what was refused:\n%s", log.String())
	}
}
