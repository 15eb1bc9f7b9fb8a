// Package loopback tells whether a host names this machine only: the one
// answer behind the loopback-only defaults of sonde's listeners (tap
// --listen, replay --serve --listen) and the plain-http exception of the
// OAuth flow.
package loopback

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Host reports whether host (a Host header or a URL's host: a name or an
// address, with or without a port, IPv6 bracketed or not) is localhost or
// a loopback address (127.0.0.0/8, ::1, and IPv4 loopback mapped in IPv6).
func Host(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// Origin reports whether an Origin header is absent or names this machine
// only: an http or https origin (scheme://host[:port], no path) whose host
// is loopback (Host). "null" (a sandboxed page, a file, a redirect) and
// any other value are not: the one check behind the loopback listeners'
// refusal of web pages (tap --listen, replay --serve --listen).
func Origin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return Host(u.Host)
}
