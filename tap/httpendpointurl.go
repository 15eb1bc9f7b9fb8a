package tap

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/internal/loopback"
)

// The legacy transport's endpoint event names where the host POSTs; the
// host reads it as a WHATWG URL parser does (the TypeScript SDK's
// new URL(data, sseURL), a browser's EventSource page), against the URL
// it opened the stream with: the tap's. resolveEndpoint reads it the same
// way for the spellings that decide where the POSTs go, so that every
// one naming the server is rewritten.

// errEndpoint: the endpoint could not be read as a URL.
var errEndpoint = errors.New("not a URL")

// resolveEndpoint resolves an endpoint event's data against base as a
// WHATWG URL parser would: leading and trailing spaces and controls
// dropped, tabs and line ends anywhere removed, a scheme in any case,
// backslashes read as slashes (before the query) in an http(s) URL,
// "//host/…" on base's scheme, "http:host/…" relative when base is http
// and on host when it is not.
func resolveEndpoint(data string, base *url.URL) (*url.URL, error) {
	s := strings.TrimFunc(data, func(r rune) bool { return r <= 0x20 })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	if scheme, rest, ok := cutScheme(s); ok {
		scheme = strings.ToLower(scheme)
		if scheme != "http" && scheme != "https" {
			u, err := url.Parse(scheme + ":" + rest)
			if err != nil {
				return nil, errEndpoint
			}
			return u, nil // never the server (an http or https origin)
		}
		rest = backslashes(rest)
		if scheme == strings.ToLower(base.Scheme) && !strings.HasPrefix(rest, "//") {
			return resolveRef(rest, base) // relative, on base's origin
		}
		return parseAbs(scheme + "://" + strings.TrimLeft(rest, "/"))
	}
	s = backslashes(s)
	if strings.HasPrefix(s, "//") {
		return parseAbs(strings.ToLower(base.Scheme) + ":" + s)
	}
	return resolveRef(s, base)
}

// cutScheme splits "scheme:rest" (a scheme: a letter, then letters,
// digits, '+', '-' or '.').
func cutScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// backslashes turns the backslashes of s before its query or fragment
// into slashes (an http(s) URL's path and authority read them so).
func backslashes(s string) string {
	end := len(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		end = i
	}
	return strings.ReplaceAll(s[:end], `\`, "/") + s[end:]
}

func resolveRef(s string, base *url.URL) (*url.URL, error) {
	ref, err := url.Parse(s)
	if err != nil {
		return nil, errEndpoint
	}
	return base.ResolveReference(ref), nil
}

func parseAbs(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return nil, errEndpoint
	}
	return u, nil
}

// sameServer reports whether u reaches the server at target: the same
// scheme and port (the default one made explicit), and the same host as
// a WHATWG parser reads it (case, a trailing dot, IPv4 written as one
// number or in hex or octal parts), or both loopback.
func sameServer(u, target *url.URL) bool {
	if !strings.EqualFold(u.Scheme, target.Scheme) || portOf(u) != portOf(target) {
		return false
	}
	a, b := canonicalHost(u.Hostname()), canonicalHost(target.Hostname())
	return a == b || loopback.Host(a) && loopback.Host(b)
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return strings.TrimLeft(p, "0")
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// canonicalHost is host as a WHATWG parser ends up with it: lower case,
// no trailing dot, an IPv4 address in its dotted decimal form, an IPv6
// address in its canonical form.
func canonicalHost(host string) string {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return a.Unmap().String()
	}
	if a, ok := whatwgIPv4(h); ok {
		return a.String()
	}
	return h
}

// whatwgIPv4 parses host as the WHATWG IPv4 parser does when its last
// label is a number: up to four parts, each decimal, 0x hex or 0 octal,
// the last one filling the remaining bytes ("2130706433", "127.1",
// "0x7f.0.0.1").
func whatwgIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case p == "":
			return netip.Addr{}, false
		case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		n, err := strconv.ParseUint(p, base, 64)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
