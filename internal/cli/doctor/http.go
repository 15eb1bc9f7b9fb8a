package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// http is the checklist of a URL: DNS, TCP, TLS, the initialize POST and
// what its answer says, then the handshake steps.
func (c *checker) http(ctx context.Context, l *list, t *connect.Target) {
	u, host, port, ok := checkURL(l, t)
	if !ok || !c.checkDNS(ctx, l, host) {
		return
	}
	d := net.Dialer{Timeout: c.timeout}
	if !checkTCP(ctx, l, &d, host, port) {
		return
	}
	if u.Scheme == "https" && !c.checkTLS(ctx, l, &d, host, port) {
		return
	}
	c.httpInitialize(ctx, l, t, u)
}

// checkURL is the url step: the target's URL, its host and port (the
// scheme's when none is given).
func checkURL(l *list, t *connect.Target) (u *url.URL, host, port string, ok bool) {
	start := l.begin("url")
	u, err := url.Parse(t.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.fail("url", start, fmt.Sprintf("%q is not an http:// or https:// URL", textfmt.Escape(t.URL)), "fix the entry's url")
		return nil, "", "", false
	}
	host, port = u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	l.pass("url", start, u.Redacted())
	return u, host, port, true
}

// checkDNS is the dns step: host looked up (an IP address needs none).
func (c *checker) checkDNS(ctx context.Context, l *list, host string) bool {
	start := l.begin("dns")
	if ip := net.ParseIP(host); ip != nil {
		l.pass("dns", start, "an IP address: nothing to look up")
		return true
	}
	ctx1, cancel := context.WithTimeout(ctx, c.timeout)
	addrs, err := net.DefaultResolver.LookupHost(ctx1, host)
	cancel()
	if err != nil {
		hint := "check the host name in the url; if it is on a private network, connect to it (VPN) first"
		var de *net.DNSError
		if errors.As(err, &de) && de.IsTimeout {
			hint = "the DNS server did not answer: check your network"
		}
		l.fail("dns", start, fmt.Sprintf("cannot resolve %s: %v", host, err), hint)
		return false
	}
	l.pass("dns", start, strings.Join(addrs, ", "))
	return true
}

// checkTCP is the tcp step: a connection to host:port, closed at once.
func checkTCP(ctx context.Context, l *list, d *net.Dialer, host, port string) bool {
	start := l.begin("tcp")
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		hint := "start the server, or fix the port in the url: nothing accepts connections there"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			hint = "no answer at all: a firewall may drop the connection, or the host is down"
		}
		l.fail("tcp", start, fmt.Sprintf("cannot connect to %s: %v", net.JoinHostPort(host, port), err), hint)
		return false
	}
	conn.Close()
	l.pass("tcp", start, "connected to "+net.JoinHostPort(host, port))
	return true
}

// checkTLS is the tls step of an https URL: the handshake, its version
// and the server's certificate.
func (c *checker) checkTLS(ctx context.Context, l *list, d *net.Dialer, host, port string) bool {
	start := l.begin("tls")
	td := tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: host}}
	ctx1, cancel := context.WithTimeout(ctx, c.timeout)
	tc, err := td.DialContext(ctx1, "tcp", net.JoinHostPort(host, port))
	cancel()
	if err != nil {
		detail, hint := tlsProblem(err, host)
		l.fail("tls", start, detail, hint)
		return false
	}
	state := tc.(*tls.Conn).ConnectionState()
	tc.Close()
	detail := tls.VersionName(state.Version)
	if len(state.PeerCertificates) > 0 {
		cert := state.PeerCertificates[0]
		detail += fmt.Sprintf(", certificate of %s valid until %s", textfmt.Clean(cert.Subject.CommonName), cert.NotAfter.Format("2006-01-02"))
	}
	l.pass("tls", start, detail)
	return true
}

// httpInitialize is the post, session and initialize steps (or the step
// that failed, or the authorization the server asks for), then the
// handshake steps.
func (c *checker) httpInitialize(ctx context.Context, l *list, t *connect.Target, u *url.URL) {
	start := l.begin("initialize")
	cl := c.newClient()
	evs := follow(cl)
	defer func() {
		cl.Close()
		evs.all()
	}()
	hc := transport.HTTPConfig{URL: t.URL, Mode: transport.HTTPMode(t.Mode), Header: t.Header, ConnectTimeout: c.timeout, AuthTimeout: c.timeout}
	err := cl.Connect(client.HTTP(hc))
	var res *mcp.InitializeResult
	if err == nil {
		ctx1, cancel := context.WithTimeout(ctx, c.timeout+time.Second)
		r, ierr := cl.Initialize(ctx1)
		cancel()
		res, err = r, ierr
	}
	initTook := time.Since(start)
	// The POST's exchange is among the events shortly after.
	post := firstPost(evs.until(func(ev client.Event) bool {
		return ev.Kind == client.EvHTTP && ev.HTTP.Method == "POST"
	}, time.Second))
	if auth := client.Authorization(err); auth != nil {
		l.steps = append(l.steps, Step{Name: "post", OK: true, MS: ms(initTook), Detail: postDetail(post)})
		l.steps = append(l.steps, Step{Name: "authorization", Detail: fmt.Sprintf("HTTP %d: %s", auth.Status, auth.Summary()), Hint: authHint(auth, u.Redacted(), len(t.Header) > 0)})
		return
	}
	if err != nil {
		l.steps = append(l.steps, postFailed(err, post, evs, initTook))
		return
	}
	detail := postDetail(post)
	if note := fallback(evs.snapshot()); note != "" {
		detail += "; " + note
	}
	l.steps = append(l.steps, Step{Name: "post", OK: true, MS: ms(initTook), Detail: detail})
	session := "none (a stateless server)"
	switch {
	case post.session:
		session = "Mcp-Session-Id given"
	case fallback(evs.snapshot()) != "":
		session = "legacy HTTP+SSE: the session is the SSE stream"
	}
	l.steps = append(l.steps, Step{Name: "session", OK: true, Detail: session})
	l.steps = append(l.steps, Step{Name: "initialize", OK: true, MS: ms(initTook), Detail: "answered"})
	c.handshake(ctx, l, cl, res, evs)
}

// postFailed is the failed step of an initialize that got no answer: the
// post, or the initialize when the server took the request.
func postFailed(err error, post post, evs *events, initTook time.Duration) Step {
	detail := cmdutil.ErrText(err)
	if post.seen {
		detail = postDetail(post) + ": " + detail
	}
	if note := fallback(evs.snapshot()); note != "" {
		detail += "; " + note
	}
	name, hint := "post", "check the url: it must be the server's MCP endpoint (often /mcp, or /sse for a legacy server)"
	var xe *transport.ExchangeError
	switch {
	case errors.As(err, &xe) && xe.Kind == transport.ExchangeProtocol:
		hint = "the answer is not MCP over HTTP: the server must answer application/json or text/event-stream with JSON-RPC; check the url, and a proxy in between"
	case client.CodeOf(err) == client.CodeTimeout:
		name, hint = "initialize", "the server accepted the request but did not answer initialize in time: look at its logs, or raise --timeout"
	case post.seen && post.status >= 200 && post.status < 300:
		name, hint = "initialize", hintFor(err)
	}
	return Step{Name: name, MS: ms(initTook), Detail: detail, Hint: hint}
}

// post is what the initialize POST's answer said.
type post struct {
	seen        bool
	status      int
	contentType string
	session     bool
}

func firstPost(evs []client.Event) post {
	for _, ev := range evs {
		if ev.Kind != client.EvHTTP || ev.HTTP.Method != "POST" {
			continue
		}
		p := post{seen: true, status: ev.HTTP.Status}
		for _, h := range ev.HTTP.Header {
			name, value, _ := strings.Cut(strings.TrimPrefix(h, "< "), ":")
			if !strings.HasPrefix(h, "< ") {
				continue
			}
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "content-type":
				p.contentType = strings.TrimSpace(value)
			case "mcp-session-id":
				p.session = true
			}
		}
		return p
	}
	return post{}
}

func postDetail(p post) string {
	if !p.seen {
		return "no POST seen"
	}
	if p.status == 0 {
		return "no answer to the POST"
	}
	d := fmt.Sprintf("HTTP %d", p.status)
	if p.contentType != "" {
		d += ", " + textfmt.Clean(p.contentType)
	}
	return d
}

// fallback says, when the initialize POST was refused (4xx) and a GET
// followed, that sonde fell back to the legacy HTTP+SSE transport ("" when
// it did not).
func fallback(evs []client.Event) string {
	refused := 0
	for _, ev := range evs {
		if ev.Kind != client.EvHTTP {
			continue
		}
		switch {
		case refused == 0 && ev.HTTP.Method == "POST":
			if ev.HTTP.Status < 400 || ev.HTTP.Status > 499 {
				return ""
			}
			refused = ev.HTTP.Status
		case refused != 0 && ev.HTTP.Method == "GET":
			d := fmt.Sprintf("Streamable HTTP refused (HTTP %d): fell back to the legacy HTTP+SSE transport", refused)
			if ev.HTTP.Status != 0 {
				d += fmt.Sprintf(" (GET: HTTP %d)", ev.HTTP.Status)
			}
			return d
		}
	}
	return ""
}

// authHint is what to do after a refusal, from what discovery found.
func authHint(auth *oauth.Discovery, u string, headers bool) string {
	switch {
	case headers:
		return "the entry's headers were sent and refused: the token is wrong, expired or lacks a scope; get a new one"
	case auth.AS == nil || len(auth.Problems) > 0:
		return "the server asks for authorization, but its OAuth discovery is incomplete (see the problems), so a host cannot sign in: fix the server's metadata, or give the entry a header with a token (\"headers\": {\"Authorization\": \"Bearer ${env:TOKEN}\"})"
	}
	return "the server wants a sign-in: a host that supports OAuth signs in itself (try it from sonde: sonde check --url " + u + " --oauth); else give the entry a header with a token (\"headers\": {\"Authorization\": \"Bearer ${env:TOKEN}\"})"
}

// tlsProblem names a certificate problem.
func tlsProblem(err error, host string) (detail, hint string) {
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &ua):
		return "the certificate is signed by an unknown authority (self-signed, or a private CA): " + err.Error(),
			"add the CA to the system's trust store (hosts verify the certificate too), or give the server a certificate from a public CA"
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return "the certificate has expired or is not valid yet: " + err.Error(),
			"renew the server's certificate (or check this machine's clock)"
	case errors.As(err, &hn):
		return fmt.Sprintf("the certificate is not for %s: %v", host, err),
			"use the host name the certificate names in the url, or give the server a certificate for this name"
	}
	return "TLS handshake failed: " + err.Error(), "check that the port speaks TLS (an http:// server behind an https:// url?)"
}
