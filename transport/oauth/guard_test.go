package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// The dialer of discovery's client refuses a link-local address when it
// is dialed, whatever the name resolved to before (DNS rebinding), and
// lets it through when the MCP server is on a link-local address itself.
func TestGuardDialsNoLinkLocal(t *testing.T) {
	for _, tc := range []struct {
		server string
		refuse bool
	}{{"127.0.0.1", true}, {"example.invalid", true}, {"169.254.10.1", false}, {"fe80::2", false}} {
		g := &guard{server: tc.server}
		g.settle(context.Background())
		tr := discoveryClient(&http.Client{}, g).Transport.(*http.Transport)
		for _, addr := range []string{"169.254.169.254:80", "[fe80::1%lo]:80", "[::ffff:169.254.169.254]:80"} {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			c, err := tr.DialContext(ctx, "tcp", addr)
			cancel()
			if c != nil {
				c.Close()
			}
			if got := errors.Is(err, ErrLinkLocal); got != tc.refuse {
				t.Errorf("server %s, dial %s: %v", tc.server, addr, err)
			}
		}
		u, _ := url.Parse("http://169.254.169.254/latest/meta-data/")
		if err := g.check(context.Background(), u); errors.Is(err, ErrLinkLocal) != tc.refuse {
			t.Errorf("server %s, check: %v", tc.server, err)
		}
	}
}

// The flow's endpoints must be https, except on loopback hosts.
func TestInsecureEndpoint(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://as.example/token": true, "http://127.0.0.1:8080/token": true, "http://127.9.9.9/t": true,
		"http://[::1]:9/t": true, "http://localhost/t": true, "http://LOCALHOST:1/t": true,
		"http://as.example/token": false, "http://10.0.0.1/t": false, "http://[::ffff:10.0.0.1]/t": false,
		"ftp://as.example/t": false, "/token": false, "http://127.0.0.1.nip.io/t": false,
	} {
		if got := insecureEndpoint(raw) == ""; got != ok {
			t.Errorf("%s: %q", raw, insecureEndpoint(raw))
		}
	}
}
