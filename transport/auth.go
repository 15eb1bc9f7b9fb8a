package transport

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
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Authorization discovery: when a server refuses a request with 401 (or 403
// with error="insufficient_scope"), sonde finds out where a token would come
// from, as an MCP client would before running the OAuth flow (which sonde
// does not run): the RFC 9728 protected resource metadata (PRM), then the
// RFC 8414 metadata of the first authorization server it names. Every
// failure is a problem of the diagnosis, never an error of its own.

const (
	// DefaultAuthTimeout bounds a whole discovery (every GET it makes).
	DefaultAuthTimeout = 5 * time.Second
	// MaxAuthBodyBytes caps the body of one metadata document.
	MaxAuthBodyBytes = 64 << 10
	// authStream is the stream name of discovery's HTTP events.
	authStream = "auth"
)

// AuthDiscovery is what sonde learned about a server's authorization after
// it refused a request: the challenge of its WWW-Authenticate header, the
// protected resource metadata, the authorization server's metadata, and
// what went wrong on the way. Fields are empty when unknown.
type AuthDiscovery struct {
	// Status is the refusal: 401, or 403 with error="insufficient_scope".
	Status int `json:"status"`
	// ResourceMetadataURL is the challenge's resource_metadata parameter.
	ResourceMetadataURL string `json:"resource_metadata_url,omitempty"`
	// Scope is the challenge's scope parameter (space-separated scopes).
	Scope string `json:"scope,omitempty"`
	// Error and ErrorDescription are the challenge's error parameters
	// ("invalid_token", "insufficient_scope", …).
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"error_description,omitempty"`
	// PRMURL is where the protected resource metadata was found; PRM is
	// nil when it was not.
	PRMURL string                     `json:"prm_url,omitempty"`
	PRM    *ProtectedResourceMetadata `json:"prm,omitempty"`
	// ASURL is where the metadata of the first authorization server in the
	// PRM was found; AS is nil when it was not.
	ASURL string              `json:"as_url,omitempty"`
	AS    *AuthServerMetadata `json:"as,omitempty"`
	// LegacyAS says the PRM was not found and AS came from the root of the
	// server's own origin, where a 2025-03-26 server (its own authorization
	// server) serves it.
	LegacyAS bool `json:"legacy_as,omitempty"`
	// Problems lists what discovery could not do or found wrong, in order.
	Problems []*AuthProblem `json:"problems,omitempty"`
}

// ProtectedResourceMetadata is what sonde keeps of RFC 9728 protected
// resource metadata.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
}

// AuthServerMetadata is what sonde keeps of RFC 8414 authorization server
// metadata (or an OpenID Connect discovery document).
type AuthServerMetadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint,omitempty"`
	TokenEndpoint         string `json:"token_endpoint,omitempty"`
	RegistrationEndpoint  string `json:"registration_endpoint,omitempty"`
	// CodeChallengeMethods is code_challenge_methods_supported; nil when
	// the field is absent.
	CodeChallengeMethods []string `json:"code_challenge_methods_supported,omitempty"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	// TokenAuthMethods is token_endpoint_auth_methods_supported.
	TokenAuthMethods []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// ClientIDMetadataDocument is client_id_metadata_document_supported
	// (2025-11-25: a client may use a URL as its client id).
	ClientIDMetadataDocument bool `json:"client_id_metadata_document_supported,omitempty"`
}

// S256 reports whether the server lists PKCE's S256 method. Without it an
// MCP client must refuse to proceed with the authorization flow.
func (m *AuthServerMetadata) S256() bool { return slices.Contains(m.CodeChallengeMethods, "S256") }

// AuthProblemKind classifies an AuthProblem.
type AuthProblemKind uint8

// The ways discovery fails or finds the metadata wrong.
const (
	// AuthNetwork: no answer (refused, reset, TLS, the deadline passed).
	AuthNetwork AuthProblemKind = iota + 1
	// AuthStatus: an answer with a status that is not 2xx.
	AuthStatus
	// AuthNotJSON: a body that is not a JSON object, or is over
	// MaxAuthBodyBytes.
	AuthNotJSON
	// AuthMalformed: a JSON object of the wrong shape, or a URL that is
	// not an absolute http(s) URL.
	AuthMalformed
	// AuthMismatch: the PRM names another resource, or the metadata
	// another issuer, than the one asked about.
	AuthMismatch
	// AuthMissing: a required field is absent.
	AuthMissing
	// AuthNoS256: the authorization server does not list S256 in
	// code_challenge_methods_supported (or has no such field).
	AuthNoS256
)

// String returns the kind's name ("network", "status", "not-json", …).
func (k AuthProblemKind) String() string {
	switch k {
	case AuthNetwork:
		return "network"
	case AuthStatus:
		return "status"
	case AuthNotJSON:
		return "not-json"
	case AuthMalformed:
		return "malformed"
	case AuthMismatch:
		return "mismatch"
	case AuthMissing:
		return "missing"
	case AuthNoS256:
		return "no-s256"
	}
	return fmt.Sprintf("AuthProblemKind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k AuthProblemKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// AuthProblem is one failure of discovery. It is an error, so a caller can
// use errors.As on AuthDiscovery.Err.
type AuthProblem struct {
	Kind AuthProblemKind `json:"kind"`
	// URL is the document's URL, when the problem is about one.
	URL string `json:"url,omitempty"`
	// Status is the HTTP status of an AuthStatus problem.
	Status int `json:"status,omitempty"`
	// Msg says what went wrong, in words.
	Msg string `json:"message"`
	Err error  `json:"-"`
}

// Error returns the message.
func (p *AuthProblem) Error() string { return p.Msg }

// Unwrap returns the cause.
func (p *AuthProblem) Unwrap() error { return p.Err }

// Err joins the problems into one error (nil when there are none).
func (a *AuthDiscovery) Err() error {
	errs := make([]error, len(a.Problems))
	for i, p := range a.Problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Summary says in one line what discovery found: "resource R, authorization
// server AS (S256 ok, dynamic registration at REG), scope a b", then the
// problems after "problems:", separated by " | ".
func (a *AuthDiscovery) Summary() string {
	var parts []string
	if a.Error != "" {
		parts = append(parts, "error "+a.Error)
	}
	switch {
	case a.PRM != nil && a.PRM.Resource != "":
		parts = append(parts, "resource "+a.PRM.Resource)
	case a.PRM != nil:
		parts = append(parts, "protected resource metadata at "+a.PRMURL+" (no resource)")
	default:
		parts = append(parts, "no protected resource metadata")
	}
	switch {
	case a.AS != nil:
		as := "authorization server " + a.AS.Issuer
		if a.AS.Issuer == "" {
			as = "authorization server metadata at " + a.ASURL
		}
		var notes []string
		if a.LegacyAS {
			notes = append(notes, "the server itself, as in 2025-03-26")
		}
		switch {
		case a.AS.S256():
			notes = append(notes, "S256 ok")
		case a.AS.CodeChallengeMethods == nil:
			notes = append(notes, "no code_challenge_methods_supported: clients must refuse")
		default:
			notes = append(notes, "no S256 in code_challenge_methods_supported: clients must refuse")
		}
		switch {
		case a.AS.RegistrationEndpoint != "":
			notes = append(notes, "dynamic registration at "+a.AS.RegistrationEndpoint)
		case a.AS.ClientIDMetadataDocument:
			notes = append(notes, "client ID metadata documents, no dynamic registration")
		default:
			notes = append(notes, "no dynamic registration")
		}
		parts = append(parts, as+" ("+strings.Join(notes, ", ")+")")
	case a.PRM != nil && len(a.PRM.AuthorizationServers) > 0:
		parts = append(parts, "authorization server "+a.PRM.AuthorizationServers[0]+" (no metadata)")
	}
	if a.PRM != nil && len(a.PRM.AuthorizationServers) > 1 {
		parts[len(parts)-1] += fmt.Sprintf(" (+%d more)", len(a.PRM.AuthorizationServers)-1)
	}
	switch {
	case a.Scope != "":
		parts = append(parts, "scope "+a.Scope)
	case a.PRM != nil && len(a.PRM.ScopesSupported) > 0:
		parts = append(parts, "scopes "+strings.Join(a.PRM.ScopesSupported, " "))
	case a.AS != nil && len(a.AS.ScopesSupported) > 0:
		parts = append(parts, "scopes "+strings.Join(a.AS.ScopesSupported, " "))
	}
	s := strings.Join(parts, ", ")
	if len(a.Problems) > 0 {
		msgs := make([]string, len(a.Problems))
		for i, p := range a.Problems {
			msgs[i] = p.Msg
		}
		s += "; problems: " + strings.Join(msgs, " | ")
	}
	return s
}

// clone copies the discovery so that callers may keep it.
func (a *AuthDiscovery) clone() *AuthDiscovery {
	c := *a
	c.Problems = slices.Clone(a.Problems)
	return &c
}

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme and its parameters (names lower-cased) or token68.
type Challenge struct {
	Scheme  string
	Params  map[string]string
	Token68 string
}

// ParseChallenges parses a WWW-Authenticate value into its challenges. It
// is lenient: what it cannot read is skipped.
func ParseChallenges(h string) []Challenge {
	p := &authLexer{s: h}
	var out []Challenge
	for {
		p.skip(" \t,")
		if p.eof() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			p.i++ // not a token character: skip it
			continue
		}
		c := Challenge{Scheme: scheme, Params: map[string]string{}}
		p.skip(" \t")
		if t, ok := p.token68(); ok {
			c.Token68 = t
			out = append(out, c)
			continue
		}
		for {
			save := p.i
			p.skip(" \t,")
			name := p.token()
			p.skip(" \t")
			if name == "" || p.peek() != '=' {
				p.i = save // a new challenge, or the end
				break
			}
			p.i++
			p.skip(" \t")
			var v string
			if p.peek() == '"' {
				v = p.quoted()
			} else {
				v = p.token()
			}
			if _, dup := c.Params[strings.ToLower(name)]; !dup {
				c.Params[strings.ToLower(name)] = v
			}
		}
		out = append(out, c)
	}
}

// bearerChallenge returns the Bearer challenge of a WWW-Authenticate value
// (the first challenge when none is Bearer).
func bearerChallenge(h string) Challenge {
	cs := ParseChallenges(h)
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c
		}
	}
	if len(cs) > 0 {
		return cs[0]
	}
	return Challenge{Params: map[string]string{}}
}

type authLexer struct {
	s string
	i int
}

func (p *authLexer) eof() bool { return p.i >= len(p.s) }

func (p *authLexer) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *authLexer) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *authLexer) token() string {
	start := p.i
	for !p.eof() && isTChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 if one stands here alone (followed by the end or
// a comma); otherwise it moves nothing.
func (p *authLexer) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && (isAlnum(p.s[j]) || strings.IndexByte("-._~+/", p.s[j]) >= 0) {
		j++
	}
	if j == p.i {
		return "", false
	}
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	k := j
	for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
		k++
	}
	if k < len(p.s) && p.s[k] != ',' {
		return "", false
	}
	t := p.s[p.i:j]
	p.i = k
	return t, true
}

// quoted reads a quoted-string, undoing backslash escapes.
func (p *authLexer) quoted() string {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String()
		case c == '\\' && !p.eof():
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isTChar(c byte) bool { return isAlnum(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 }

// needsDiscovery reports whether a refusal calls for discovery: a 401, or a
// 403 whose challenge has error="insufficient_scope".
func needsDiscovery(status int, challenge string) bool {
	switch status {
	case http.StatusUnauthorized:
		return true
	case http.StatusForbidden:
		return bearerChallenge(challenge).Params["error"] == "insufficient_scope"
	}
	return false
}

// authRun is one discovery of a connection, shared by every refusal that
// names the same resource_metadata URL (or none): the first runs it, the
// others wait for it and reuse what it found.
type authRun struct {
	done chan struct{}
	res  AuthDiscovery // PRM, AS and their problems; read after done
}

// discoverAuth runs discovery for a refusal of request id (invalid for
// the legacy GET) with WWW-Authenticate challenge, within AuthTimeout of
// the connection's context. The metadata part is fetched once per
// resource_metadata URL; the challenge part is this refusal's.
func (h *HTTP) discoverAuth(status int, challenge string, id jsonrpc.ID) *AuthDiscovery {
	c := bearerChallenge(challenge)
	a := &AuthDiscovery{Status: status, ResourceMetadataURL: c.Params["resource_metadata"], Scope: c.Params["scope"],
		Error: c.Params["error"], ErrorDescription: c.Params["error_description"]}
	ctx, cancel := context.WithTimeout(h.ctx, h.cfg.AuthTimeout)
	defer cancel()
	h.mu.Lock()
	if h.authRuns == nil {
		h.authRuns = map[string]*authRun{}
	}
	run, shared := h.authRuns[a.ResourceMetadataURL]
	if !shared {
		run = &authRun{done: make(chan struct{})}
		h.authRuns[a.ResourceMetadataURL] = run
	}
	h.mu.Unlock()
	if !shared {
		d := &discovery{h: h, ctx: ctx, id: id}
		d.run(a.ResourceMetadataURL, &run.res)
		close(run.done)
	} else {
		select {
		case <-run.done:
		case <-ctx.Done():
			a.Problems = []*AuthProblem{{Kind: AuthNetwork, Msg: "discovery (run for an earlier refusal) did not finish in time", Err: ctx.Err()}}
			return a
		}
	}
	m := run.res.clone()
	a.PRMURL, a.PRM, a.ASURL, a.AS, a.LegacyAS, a.Problems = m.PRMURL, m.PRM, m.ASURL, m.AS, m.LegacyAS, m.Problems
	return a
}

// discovery is one run of the fetches.
type discovery struct {
	h   *HTTP
	ctx context.Context
	id  jsonrpc.ID
}

// run fills out's PRM, AS and problems.
func (d *discovery) run(rmURL string, out *AuthDiscovery) {
	server := d.h.url
	var candidates []string
	if rmURL != "" {
		candidates = []string{rmURL}
	} else {
		candidates = wellKnownPRM(server)
	}
	var tried []*AuthProblem
	for i, u := range candidates {
		what := "protected resource metadata"
		if rmURL == "" {
			what = fmt.Sprintf("protected resource metadata (well-known URI %d of %d)", i+1, len(candidates))
		}
		var prm ProtectedResourceMetadata
		p := d.fetch(u, what, &prm, func() string {
			return fmt.Sprintf("%s: resource %s; authorization servers %s", what, orNone(prm.Resource), orNone(strings.Join(prm.AuthorizationServers, ", ")))
		})
		if p == nil {
			out.PRMURL, out.PRM = u, &prm
			break
		}
		tried = append(tried, p)
		if d.ctx.Err() != nil {
			break
		}
	}
	if out.PRM == nil {
		out.Problems = append(out.Problems, tried...)
		if d.ctx.Err() == nil {
			// A 2025-03-26 server is its own authorization server, with its
			// metadata at the root of its origin. Only what is found there
			// counts: its absence is no problem of its own.
			origin := &url.URL{Scheme: server.Scheme, Host: server.Host}
			var legacy AuthDiscovery
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
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMissing, URL: out.PRMURL, Msg: "the protected resource metadata at " + out.PRMURL + " has no resource"})
	case !resourceMatches(prm.Resource, server):
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMismatch, URL: out.PRMURL,
			Msg: fmt.Sprintf("the protected resource metadata names resource %s, not this server (%s)", prm.Resource, server.Redacted())})
	}
	if len(prm.AuthorizationServers) == 0 {
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMissing, URL: out.PRMURL, Msg: "the protected resource metadata at " + out.PRMURL + " names no authorization server"})
		return
	}
	issuer := prm.AuthorizationServers[0]
	iu, err := url.Parse(issuer)
	if err != nil || (iu.Scheme != "http" && iu.Scheme != "https") || iu.Host == "" {
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMalformed, URL: out.PRMURL, Msg: fmt.Sprintf("authorization server %q is not an absolute http(s) URL", issuer), Err: err})
		return
	}
	d.authServer(issuer, wellKnownAS(iu), "authorization server metadata", out)
}

// authServer looks for the metadata of issuer at candidates, in order, and
// checks what it finds; out gets the metadata and the problems. It reports
// whether metadata was found (the failed attempts are then no problem).
func (d *discovery) authServer(issuer string, candidates []string, what string, out *AuthDiscovery) bool {
	var tried []*AuthProblem
	for i, u := range candidates {
		what := what
		if len(candidates) > 1 {
			what = fmt.Sprintf("%s (URI %d of %d)", what, i+1, len(candidates))
		}
		var as AuthServerMetadata
		p := d.fetch(u, what, &as, func() string {
			s := "S256 ok"
			if !as.S256() {
				s = "no S256"
			}
			return fmt.Sprintf("%s: issuer %s; %s; registration %s", what, orNone(as.Issuer), s, orNone(as.RegistrationEndpoint))
		})
		if p == nil {
			out.ASURL, out.AS = u, &as
			break
		}
		tried = append(tried, p)
		if d.ctx.Err() != nil {
			break
		}
	}
	if out.AS == nil {
		out.Problems = append(out.Problems, tried...)
		return false
	}
	as := out.AS
	switch {
	case as.Issuer == "":
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMissing, URL: out.ASURL, Msg: "the authorization server metadata at " + out.ASURL + " has no issuer"})
	case strings.TrimSuffix(as.Issuer, "/") != strings.TrimSuffix(issuer, "/"):
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMismatch, URL: out.ASURL, Msg: fmt.Sprintf("the authorization server metadata at %s names issuer %s, not %s", out.ASURL, as.Issuer, issuer)})
	}
	for _, f := range []struct{ name, v string }{{"authorization_endpoint", as.AuthorizationEndpoint}, {"token_endpoint", as.TokenEndpoint}} {
		if f.v == "" {
			out.Problems = append(out.Problems, &AuthProblem{Kind: AuthMissing, URL: out.ASURL, Msg: "the authorization server metadata has no " + f.name})
		}
	}
	switch {
	case as.CodeChallengeMethods == nil:
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthNoS256, URL: out.ASURL, Msg: "the authorization server metadata has no code_challenge_methods_supported: an MCP client must refuse to proceed (PKCE with S256 is required)"})
	case !as.S256():
		out.Problems = append(out.Problems, &AuthProblem{Kind: AuthNoS256, URL: out.ASURL, Msg: fmt.Sprintf("the authorization server supports PKCE methods %s, not S256: an MCP client must refuse to proceed", strings.Join(as.CodeChallengeMethods, ", "))})
	}
	return true
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// fetch GETs one metadata document into v, bounded by MaxAuthBodyBytes,
// and reports the exchange as an HTTP event whose note says what was found
// (found, called on success) or what failed. User headers are not sent:
// the documents are public, and may live on another host.
func (d *discovery) fetch(rawURL, what string, v any, found func() string) *AuthProblem {
	h := d.h
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p := &AuthProblem{Kind: AuthMalformed, URL: rawURL, Msg: fmt.Sprintf("%s URL %q is not an absolute http(s) URL", what, rawURL), Err: err}
		h.note(HTTPEvent{Stream: authStream, ReqID: d.id, Note: p.Msg})
		return p
	}
	shown := u.Redacted()
	req, err := http.NewRequestWithContext(d.ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return &AuthProblem{Kind: AuthMalformed, URL: shown, Msg: fmt.Sprintf("%s: GET %s: %v", what, shown, err), Err: err}
	}
	req.Header.Set("Accept", "application/json")
	ev := HTTPEvent{Method: http.MethodGet, URL: shown, Header: []string{"> Accept: application/json"}, Stream: authStream, ReqID: d.id}
	start := time.Now()
	resp, err := h.hc.Do(req)
	ev.Duration = time.Since(start)
	if err != nil {
		msg := fmt.Sprintf("%s: GET %s: %v", what, shown, unwrapURLError(err))
		if d.ctx.Err() != nil && h.ctx.Err() == nil {
			msg = fmt.Sprintf("%s: GET %s: no answer within the discovery deadline (%v)", what, shown, h.cfg.AuthTimeout)
		}
		p := &AuthProblem{Kind: AuthNetwork, URL: shown, Msg: msg, Err: err}
		if h.ctx.Err() == nil {
			ev.Note = p.Msg
			h.note(ev)
		}
		return p
	}
	defer resp.Body.Close()
	ev.Status = resp.StatusCode
	ev.Header = append(ev.Header, responseHeaders(resp)...)
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxAuthBodyBytes+1))
	ev.Raw = body[:min(len(body), errorBodyBytes)]
	var p *AuthProblem
	switch {
	case resp.StatusCode/100 != 2:
		p = &AuthProblem{Kind: AuthStatus, URL: shown, Status: resp.StatusCode, Msg: fmt.Sprintf("%s: GET %s: HTTP %d", what, shown, resp.StatusCode)}
	case err != nil:
		p = &AuthProblem{Kind: AuthNetwork, URL: shown, Msg: fmt.Sprintf("%s: GET %s: reading the body: %v", what, shown, err), Err: err}
	case len(body) > MaxAuthBodyBytes:
		p = &AuthProblem{Kind: AuthNotJSON, URL: shown, Msg: fmt.Sprintf("%s: GET %s: the body is over %d KiB", what, shown, MaxAuthBodyBytes>>10)}
	default:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			p = &AuthProblem{Kind: AuthNotJSON, URL: shown, Msg: fmt.Sprintf("%s: GET %s: not a JSON object (Content-Type %q): %s", what, shown, resp.Header.Get("Content-Type"), shownBody(body)), Err: err}
		} else if err := json.Unmarshal(body, v); err != nil {
			p = &AuthProblem{Kind: AuthMalformed, URL: shown, Msg: fmt.Sprintf("%s: GET %s: %v", what, shown, err), Err: err}
		}
	}
	if p != nil {
		ev.Note = p.Msg
	} else {
		ev.Note = found()
	}
	h.note(ev)
	return p
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
	if !strings.EqualFold(r.Scheme, server.Scheme) || hostPort(r) != hostPort(server) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
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
