package oauth

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
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

// fakeDNS is a resolver whose every name resolves to an IPv4 address
// answer(n) for the nth A query (no AAAA), served over a pipe.
func fakeDNS(answer func(n int) [4]byte) *net.Resolver {
	var mu sync.Mutex
	n := 0
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				var l [2]byte
				if _, err := io.ReadFull(server, l[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(server, q); err != nil || len(q) < 12 {
					return
				}
				end := 12
				for end < len(q) && q[end] != 0 {
					end += int(q[end]) + 1
				}
				end += 5 // the root label, QTYPE, QCLASS
				if end > len(q) {
					return
				}
				qtype := binary.BigEndian.Uint16(q[end-4:])
				resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, q[12:end]...)
				if qtype == 1 {
					mu.Lock()
					ip := answer(n)
					n++
					mu.Unlock()
					resp[7] = 1
					resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4)
					resp = append(resp, ip[:]...)
				}
				out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
				if _, err := server.Write(append(out, resp...)); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
}

// DNS rebinding: a name that resolves to loopback when discovery checks
// it, and to a link-local address when the GET dials it, is refused at
// the dial.
func TestGuardDNSRebinding(t *testing.T) {
	saved := resolver
	t.Cleanup(func() { resolver = saved })
	resolver = fakeDNS(func(n int) [4]byte {
		if n == 0 {
			return [4]byte{127, 0, 0, 1}
		}
		return [4]byte{169, 254, 169, 254}
	})
	server, _ := url.Parse("http://127.0.0.1:1/mcp")
	d := NewDiscoverer(server, &http.Client{}, 3*time.Second)
	a := d.Discover(t.Context(), 401, `Bearer resource_metadata="http://rebind.sonde.test:9/prm"`, func(Event) {})
	if len(a.Problems) == 0 || a.Problems[0].Kind != ProblemRefused || !strings.Contains(a.Problems[0].Msg, "dialing 169.254.169.254") {
		t.Fatalf("%+v", a.Problems)
	}
}

// The issuer the flow may deal with: the PRM's first authorization
// server; without a PRM, the issuer of the server's own metadata (a
// 2025-03-26 server), else its origin.
func TestWantIssuer(t *testing.T) {
	server, _ := url.Parse("http://localhost:3000/mcp")
	as := &ServerMetadata{Issuer: "http://localhost:3000/oauth"}
	for _, tc := range []struct {
		d    Discovery
		want string
	}{
		{Discovery{PRM: &ProtectedResourceMetadata{AuthorizationServers: []string{"https://as.example", "https://b"}}, AS: as}, "https://as.example"},
		{Discovery{AS: as, LegacyAS: true}, "http://localhost:3000/oauth"},
		{Discovery{AS: as}, "http://localhost:3000"},
		{Discovery{PRM: &ProtectedResourceMetadata{}, AS: as, LegacyAS: true}, "http://localhost:3000/oauth"},
	} {
		if got := wantIssuer(&tc.d, server); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.d, got, tc.want)
		}
	}
}
