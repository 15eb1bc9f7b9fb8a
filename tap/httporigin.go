package tap

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/sonde-mcp/sonde/internal/loopback"
)

// IsLoopbackAddr reports whether a listen address (host:port) is on a
// loopback interface only: localhost or a loopback IP. An empty host (all
// interfaces) is not.
func IsLoopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	return loopback.Host(h)
}

// ErrOrigin is the cause of a refused --allow-origin value.
var ErrOrigin = errors.New("not an origin")

// ParseOrigin checks an origin the tap is told to accept (--allow-origin)
// and returns it as an Origin header spells it, for comparison: an http
// or https URL with a host and nothing after it (scheme and host in lower
// case, the scheme's default port left out). "null" is refused: every
// sandboxed page and local file sends it, so accepting it would accept
// them all.
func ParseOrigin(s string) (string, error) {
	if strings.TrimSpace(s) == "null" {
		return "", fmt.Errorf("%w: %q is what every sandboxed page and local file sends; it cannot be allowed", ErrOrigin, s)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: %q: want scheme://host[:port], as a browser sends it (https://inspector.example, http://localhost:6274)", ErrOrigin, s)
	}
	return canonicalOrigin(u), nil
}

// canonicalOrigin is u's scheme://host[:port], in lower case, without the
// scheme's default port.
func canonicalOrigin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host
}

// originAllowed reports whether a request with Origin header origin may
// go on: no Origin (a host that is not a browser sends none), a loopback
// one (loopback.Origin: a page this machine serves), or one the user
// named (ProxyOptions.AllowOrigins). Any other is a web page the user's
// browser is showing, which must not reach the server with the
// credentials the tap forwards.
func (p *Proxy) originAllowed(origin string) bool {
	if loopback.Origin(origin) {
		return true
	}
	c, err := ParseOrigin(origin)
	if err != nil {
		return false
	}
	for _, a := range p.allowOrigins {
		if a == c {
			return true
		}
	}
	return false
}

// refuseOrigin answers 403 to a request whose Origin is not allowed, and
// says so on the log; it reports whether it refused.
func (p *Proxy) refuseOrigin(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if len(r.Header.Values("Origin")) > 1 {
		origin = strings.Join(r.Header.Values("Origin"), ", ") // never one origin
	} else if p.originAllowed(origin) {
		return false
	}
	fmt.Fprintf(p.opts.Log, "sonde tap: refused a request with Origin %q: not loopback (a web page?); --allow-origin ORIGIN accepts it\n", cut(origin, 200))
	http.Error(w, "sonde tap: Origin must be loopback, or allowed with --allow-origin", http.StatusForbidden)
	return true
}

// cut shortens s to at most n bytes, marking the cut with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
