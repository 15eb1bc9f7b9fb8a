package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Discovery fetches URLs the server names (resource_metadata in its
// challenge, authorization_servers in its metadata): a hostile server could
// point sonde at what only the user's machine reaches. Link-local
// addresses (cloud metadata services at 169.254.169.254, fe80::/10) are
// refused unless the MCP server itself is on one; the check runs on the
// address resolved before the GET and again on the address dialed, so a
// name that resolves elsewhere the second time (DNS rebinding) does not
// get through. Redirects are followed at most MaxRedirects times.

// MaxRedirects bounds the redirects one discovery GET follows.
const MaxRedirects = 3

// ErrLinkLocal is the cause of a refused fetch of a link-local address.
var ErrLinkLocal = errors.New("link-local address refused")

// errRedirects stops a GET after MaxRedirects redirects.
var errRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirects)

// resolver looks up the addresses of a host before a fetch (tests
// replace it).
var resolver = net.DefaultResolver

// guard says which addresses discovery may reach.
type guard struct {
	server string // the MCP server's host
	once   sync.Once
	allow  atomic.Bool // the MCP server is on a link-local address itself
}

// settle finds out, once, whether the MCP server is on a link-local
// address (then discovery may reach link-local addresses too).
func (g *guard) settle(ctx context.Context) {
	g.once.Do(func() {
		if a, err := netip.ParseAddr(g.server); err == nil {
			g.allow.Store(linkLocal(a))
			return
		}
		addrs, err := resolver.LookupNetIP(ctx, "ip", g.server)
		if err != nil {
			return
		}
		for _, a := range addrs {
			if linkLocal(a) {
				g.allow.Store(true)
			}
		}
	})
}

// linkLocal reports whether a is in 169.254.0.0/16 or fe80::/10 (an
// IPv4-mapped address counts as its IPv4 address).
func linkLocal(a netip.Addr) bool {
	return a.Unmap().IsLinkLocalUnicast()
}

// check refuses u when its host is, or resolves to, a link-local address
// and the server is not on one. A host that does not resolve passes: the
// GET then says what is wrong.
func (g *guard) check(ctx context.Context, u *url.URL) error {
	if g.allowed() {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if linkLocal(a) {
			return fmt.Errorf("%w: %s", ErrLinkLocal, host)
		}
		return nil
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if linkLocal(a) {
			return fmt.Errorf("%w: %s resolves to %s", ErrLinkLocal, host, a)
		}
	}
	return nil
}

// allowed reports whether link-local addresses may be reached: false
// until settle found the server on one.
func (g *guard) allowed() bool { return g.allow.Load() }

// control is the dialer's Control: it refuses a link-local address at the
// moment it is dialed.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && linkLocal(a) && !g.allowed() {
		return fmt.Errorf("%w: dialing %s", ErrLinkLocal, host)
	}
	return nil
}

// discoveryClient returns the client discovery's GETs go through: hc with
// at most MaxRedirects redirects, each checked by g and carrying no header
// but Accept, and, when hc's transport is an *http.Transport (or the
// default), a copy of it whose dialer refuses what g refuses.
func discoveryClient(hc *http.Client, g *guard) *http.Client {
	c := *hc
	var tr *http.Transport
	switch t := hc.Transport.(type) {
	case nil:
		tr = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		tr = t.Clone()
	}
	if tr != nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: resolver, Control: g.control}
		tr.DialContext = d.DialContext
		// Discovery runs once per connection: keep no idle connection.
		tr.DisableKeepAlives = true
		c.Transport = tr
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects {
			return errRedirects
		}
		if err := g.check(req.Context(), req.URL); err != nil {
			return err
		}
		for name := range req.Header {
			if name != "Accept" {
				req.Header.Del(name)
			}
		}
		return nil
	}
	return &c
}
