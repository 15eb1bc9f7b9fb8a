package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// MaxBodyBytes caps the body of one metadata document or token response.
const MaxBodyBytes = 64 << 10

// Discoverer runs discovery for one connection: the metadata part once per
// resource_metadata URL (or none), shared by every refusal that names it.
type Discoverer struct {
	server  *url.URL
	hc      *http.Client // discoveryClient's
	guard   *guard
	timeout time.Duration

	mu   sync.Mutex
	runs map[string]*discoveryRun // by resource_metadata URL
}

// NewDiscoverer prepares discovery for the server at server (the MCP
// endpoint), through a copy of hc that follows at most MaxRedirects
// redirects and reaches no link-local address unless server is on one;
// timeout bounds one discovery (every GET it makes).
func NewDiscoverer(server *url.URL, hc *http.Client, timeout time.Duration) *Discoverer {
	g := &guard{server: server.Hostname()}
	return &Discoverer{server: server, hc: discoveryClient(hc, g), guard: g, timeout: timeout, runs: map[string]*discoveryRun{}}
}

// discoveryRun is one discovery, shared by every refusal that names the
// same resource_metadata URL (or none): the first runs it, the others wait
// for it and reuse what it found.
type discoveryRun struct {
	done chan struct{}
	res  Discovery // PRM, AS and their problems; read after done
}

// Discover runs discovery for a refusal with HTTP status and
// WWW-Authenticate value challenge, within the Discoverer's timeout below
// conn (the connection's context: its end stops it quietly). The metadata
// part is fetched once per resource_metadata URL; the challenge part is
// this refusal's. note receives discovery's GETs.
func (d *Discoverer) Discover(conn context.Context, status int, challenge string, note func(Event)) *Discovery {
	c := BearerChallenge(challenge)
	a := &Discovery{Status: status, ResourceMetadataURL: c.Params["resource_metadata"], Scope: c.Params["scope"],
		Error: c.Params["error"], ErrorDescription: c.Params["error_description"]}
	ctx, cancel := context.WithTimeout(conn, d.timeout)
	defer cancel()
	d.mu.Lock()
	run, shared := d.runs[a.ResourceMetadataURL]
	if !shared {
		run = &discoveryRun{done: make(chan struct{})}
		d.runs[a.ResourceMetadataURL] = run
	}
	d.mu.Unlock()
	if !shared {
		d.guard.settle(ctx)
		f := &fetcher{d: d, conn: conn, ctx: ctx, note: note}
		f.run(a.ResourceMetadataURL, &run.res)
		close(run.done)
	} else {
		select {
		case <-run.done:
		case <-ctx.Done():
			a.Problems = []*Problem{{Kind: ProblemNetwork, Msg: "discovery (run for an earlier refusal) did not finish in time", Err: ctx.Err()}}
			return a
		}
	}
	m := run.res.clone()
	a.PRMURL, a.PRM, a.ASURL, a.AS, a.LegacyAS, a.OtherOrigins, a.Problems = m.PRMURL, m.PRM, m.ASURL, m.AS, m.LegacyAS, m.OtherOrigins, m.Problems
	return a
}

// fetcher is one run of the fetches: ctx bounds it, conn is the
// connection's context.
type fetcher struct {
	d         *Discoverer
	conn, ctx context.Context
	note      func(Event)
	others    []string // origins other than the server's fetched from
}

// run fills out's PRM, AS, other origins and problems.
func (d *fetcher) run(rmURL string, out *Discovery) {
	defer func() { out.OtherOrigins = d.others }()
	server := d.d.server
	var candidates []string
	if rmURL != "" {
		candidates = []string{rmURL}
	} else {
		candidates = wellKnownPRM(server)
	}
	what := func(i int) string {
		if rmURL != "" {
			return "protected resource metadata"
		}
		return fmt.Sprintf("protected resource metadata (well-known URI %d of %d)", i+1, len(candidates))
	}
	var tried []*Problem
	out.PRMURL, out.PRM, tried = fetchFirst(d, candidates, what, func(what string, prm *ProtectedResourceMetadata) string {
		return fmt.Sprintf("%s: resource %s; authorization servers %s", what, orNone(prm.Resource), orNone(strings.Join(prm.AuthorizationServers, ", ")))
	})
	if out.PRM == nil {
		out.Problems = append(out.Problems, tried...)
		if d.ctx.Err() == nil {
			// A 2025-03-26 server is its own authorization server, with its
			// metadata at the root of its origin. Only what is found there
			// counts: its absence is no problem of its own.
			origin := &url.URL{Scheme: server.Scheme, Host: server.Host}
			var legacy Discovery
			if d.authServer(origin.String(), []string{origin.String() + "/.well-known/oauth-authorization-server"},
				"authorization server metadata of the server itself (2025-03-26)", &legacy) {
				out.ASURL, out.AS, out.LegacyAS = legacy.ASURL, legacy.AS, true
				out.Problems = append(out.Problems, legacy.Problems...)
			}
		}
		return
	}
	prm := out.PRM
	switch {
	case prm.Resource == "":
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMissing, URL: out.PRMURL, Msg: "the protected resource metadata at " + out.PRMURL + " has no resource"})
	case !resourceMatches(prm.Resource, server):
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMismatch, URL: out.PRMURL,
			Msg: fmt.Sprintf("the protected resource metadata names resource %s, not this server (%s)", prm.Resource, server.Redacted())})
	}
	if len(prm.AuthorizationServers) == 0 {
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMissing, URL: out.PRMURL, Msg: "the protected resource metadata at " + out.PRMURL + " names no authorization server"})
		return
	}
	issuer := prm.AuthorizationServers[0]
	iu, err := url.Parse(issuer)
	if err != nil || (iu.Scheme != "http" && iu.Scheme != "https") || iu.Host == "" {
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMalformed, URL: out.PRMURL, Msg: fmt.Sprintf("authorization server %q is not an absolute http(s) URL", issuer), Err: err})
		return
	}
	d.authServer(issuer, wellKnownAS(iu), "authorization server metadata", out)
}

// authServer looks for the metadata of issuer at candidates, in order, and
// checks what it finds; out gets the metadata and the problems. It reports
// whether metadata was found (the failed attempts are then no problem).
func (d *fetcher) authServer(issuer string, candidates []string, what string, out *Discovery) bool {
	nth := func(i int) string {
		if len(candidates) > 1 {
			return fmt.Sprintf("%s (URI %d of %d)", what, i+1, len(candidates))
		}
		return what
	}
	var tried []*Problem
	out.ASURL, out.AS, tried = fetchFirst(d, candidates, nth, func(what string, as *ServerMetadata) string {
		s := "S256 ok"
		if !as.S256() {
			s = "no S256"
		}
		return fmt.Sprintf("%s: issuer %s; %s; registration %s", what, orNone(as.Issuer), s, orNone(as.RegistrationEndpoint))
	})
	if out.AS == nil {
		out.Problems = append(out.Problems, tried...)
		return false
	}
	as := out.AS
	switch {
	case as.Issuer == "":
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMissing, URL: out.ASURL, Msg: "the authorization server metadata at " + out.ASURL + " has no issuer"})
	case strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
		out.Problems = append(out.Problems, &Problem{Kind: ProblemMismatch, URL: out.ASURL, Msg: fmt.Sprintf("the authorization server metadata at %s names issuer %s, not %s", out.ASURL, as.Issuer, issuer)})
	}
	for _, f := range []struct{ name, v string }{{"authorization_endpoint", as.AuthorizationEndpoint}, {"token_endpoint", as.TokenEndpoint}} {
		if f.v == "" {
			out.Problems = append(out.Problems, &Problem{Kind: ProblemMissing, URL: out.ASURL, Msg: "the authorization server metadata has no " + f.name})
		}
	}
	switch {
	case as.CodeChallengeMethods == nil:
		out.Problems = append(out.Problems, &Problem{Kind: ProblemNoS256, URL: out.ASURL, Msg: "the authorization server metadata has no code_challenge_methods_supported: an MCP client must refuse to proceed (PKCE with S256 is required)"})
	case !as.S256():
		out.Problems = append(out.Problems, &Problem{Kind: ProblemNoS256, URL: out.ASURL, Msg: fmt.Sprintf("the authorization server supports PKCE methods %s, not S256: an MCP client must refuse to proceed", strings.Join(as.CodeChallengeMethods, ", "))})
	}
	return true
}

// fetchFirst fetches the metadata at candidates, in order, until one
// answers with it (the i-th is named what(i) in notes and problems, and
// found summarises what it gave): its URL and the metadata, or "", nil and
// the problem of each attempt. It stops early when the context ends.
func fetchFirst[T any](d *fetcher, candidates []string, what func(i int) string, found func(what string, m *T) string) (string, *T, []*Problem) {
	var tried []*Problem
	for i, u := range candidates {
		w, m := what(i), new(T)
		p := d.fetch(u, w, m, func() string { return found(w, m) })
		if p == nil {
			return u, m, nil
		}
		tried = append(tried, p)
		if d.ctx.Err() != nil {
			break
		}
	}
	return "", nil, tried
}

// fetch GETs one metadata document into v, bounded by MaxBodyBytes,
// and reports the exchange as an HTTP event whose note says what was found
// (found, called on success) or what failed. User headers are not sent:
// the documents are public, and may live on another host.
func (d *fetcher) fetch(rawURL, what string, v any, found func() string) *Problem {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p := &Problem{Kind: ProblemMalformed, URL: rawURL, Msg: fmt.Sprintf("%s URL %q is not an absolute http(s) URL", what, rawURL), Err: err}
		d.note(Event{Stream: StreamDiscovery, Note: p.Msg})
		return p
	}
	shown := u.Redacted()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &Problem{Kind: ProblemMalformed, URL: shown, Msg: fmt.Sprintf("%s: GET %s: %v", what, shown, err), Err: err}
	}
	req.Header.Set("Accept", "application/json")
	ev := Event{Method: http.MethodGet, URL: shown, Header: []string{"> Accept: application/json"}, Stream: StreamDiscovery}
	if err := d.d.guard.check(d.ctx, u); err != nil {
		p := refused(what, shown, err)
		ev.Note = p.Msg
		d.note(ev)
		return p
	}
	d.other(u)
	start := time.Now()
	resp, err := d.d.hc.Do(req)
	ev.Duration = time.Since(start)
	if err != nil {
		msg := fmt.Sprintf("%s: GET %s: %v", what, shown, httpshow.URLError(err))
		if d.ctx.Err() != nil && d.conn.Err() == nil {
			msg = fmt.Sprintf("%s: GET %s: no answer within the discovery deadline (%v)", what, shown, d.d.timeout)
		}
		p := &Problem{Kind: ProblemNetwork, URL: shown, Msg: msg, Err: err}
		if errors.Is(err, ErrLinkLocal) || errors.Is(err, errRedirects) {
			p = refused(what, shown, err)
		}
		if d.conn.Err() == nil {
			ev.Note = p.Msg
			d.note(ev)
		}
		return p
	}
	defer resp.Body.Close()
	if resp.Request != nil && resp.Request.URL != nil {
		d.other(resp.Request.URL) // where redirects led
	}
	ev.Status = resp.StatusCode
	ev.Header = append(ev.Header, httpshow.ResponseHeaders(resp)...)
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	ev.Raw = body[:min(len(body), httpshow.ErrorBodyBytes)]
	var p *Problem
	switch {
	case resp.StatusCode/100 != 2:
		p = &Problem{Kind: ProblemStatus, URL: shown, Status: resp.StatusCode, Msg: fmt.Sprintf("%s: GET %s: HTTP %d", what, shown, resp.StatusCode)}
	case err != nil:
		p = &Problem{Kind: ProblemNetwork, URL: shown, Msg: fmt.Sprintf("%s: GET %s: reading the body: %v", what, shown, err), Err: err}
	case len(body) > MaxBodyBytes:
		p = &Problem{Kind: ProblemNotJSON, URL: shown, Msg: fmt.Sprintf("%s: GET %s: the body is over %d KiB", what, shown, MaxBodyBytes>>10)}
	default:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			p = &Problem{Kind: ProblemNotJSON, URL: shown, Msg: fmt.Sprintf("%s: GET %s: not a JSON object (Content-Type %q): %s", what, shown, resp.Header.Get("Content-Type"), httpshow.Body(body)), Err: err}
		} else if err := json.Unmarshal(body, v); err != nil {
			p = &Problem{Kind: ProblemMalformed, URL: shown, Msg: fmt.Sprintf("%s: GET %s: %v", what, shown, err), Err: err}
		}
	}
	if p != nil {
		ev.Note = p.Msg
	} else {
		ev.Note = found()
	}
	d.note(ev)
	return p
}

// refused is the problem of a fetch sonde refused to make (or to go on
// with): a link-local address, too many redirects.
func refused(what, shown string, err error) *Problem {
	cause := httpshow.URLError(err)
	msg := fmt.Sprintf("%s: GET %s: refused: %v", what, shown, cause)
	if errors.Is(err, ErrLinkLocal) {
		msg += " (discovery does not reach link-local addresses, such as cloud metadata services, unless the MCP server is on one)"
	}
	return &Problem{Kind: ProblemRefused, URL: shown, Msg: msg, Err: err}
}

// other notes u's origin when it is not the server's.
func (d *fetcher) other(u *url.URL) {
	s := d.d.server
	if SameOrigin(u, s) {
		return
	}
	o := strings.ToLower(u.Scheme) + "://" + u.Host
	if !slices.Contains(d.others, o) {
		d.others = append(d.others, o)
	}
}

// wellKnownPRM lists the RFC 9728 URIs of server's metadata in the spec's
// order: with the server's path, then at the root.
func wellKnownPRM(server *url.URL) []string {
	const wk = "/.well-known/oauth-protected-resource"
	root := server.Scheme + "://" + server.Host
	path := strings.TrimSuffix(server.EscapedPath(), "/")
	if path == "" {
		return []string{root + wk}
	}
	return []string{root + wk + path, root + wk}
}

// wellKnownAS lists the URIs of an issuer's metadata in the spec's order:
// for an issuer with a path, RFC 8414 with the path inserted, OpenID
// Connect with the path inserted, OpenID Connect with the path appended;
// for one without, the two root URIs.
func wellKnownAS(issuer *url.URL) []string {
	root := issuer.Scheme + "://" + issuer.Host
	path := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if path == "" {
		return []string{root + "/.well-known/oauth-authorization-server", root + "/.well-known/openid-configuration"}
	}
	return []string{root + "/.well-known/oauth-authorization-server" + path,
		root + "/.well-known/openid-configuration" + path,
		root + path + "/.well-known/openid-configuration"}
}

// resourceMatches reports whether a PRM's resource identifies server: the
// same scheme, host and port, and a path that is the server's path or one
// of its parents (as the MCP SDKs accept); a trailing slash, the query and
// the fragment do not count.
func resourceMatches(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" {
		return false
	}
	if !SameOrigin(r, server) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (a default port made explicit, case not counted): the one origin check of
// discovery and of the transport's legacy endpoint event.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && hostPort(a) == hostPort(b)
}

// hostPort is u's host, lower-cased, with the scheme's default port made
// explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}
