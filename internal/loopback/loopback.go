// Package loopback tells whether a host names this machine only: the one
// answer behind the loopback-only defaults of sonde's listeners (tap
// --listen, replay --serve --listen) and the plain-http exception of the
// OAuth flow.
package loopback

import (
	"net"
	"net/netip"
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
