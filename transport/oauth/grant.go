package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The grants without a user (Config.Grant): client credentials, and
// cross-app access (an identity assertion exchanged at the identity
// provider for an ID-JAG, then the JWT bearer grant). Both POST to the
// token endpoint that discovery found, after the same checks as the code
// grant (the issuer, the resource, https off loopback), with the client
// authenticated by its secret or a private_key_jwt assertion.

// The URNs of cross-app access (RFC 8693, RFC 7523, SEP-990).
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	grantJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeSAML2     = "urn:ietf:params:oauth:token-type:saml2"
	assertionTypeJWT   = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// now is the clock of assertions (tests replace it).
var now = time.Now

// grantNote tells Config.OnGrant, and the flow's events, which grant runs
// and why.
func (f *flow) grantNote(text string) {
	text += f.dpop
	f.a.note(Event{Stream: StreamFlow, Note: "grant: " + text})
	if f.a.cfg.OnGrant != nil {
		f.a.cfg.OnGrant(text)
	}
}

// authDescription says how g's client authenticates at the token
// endpoint, and why: ", authenticated with …", or "" for a public client.
func (g grant) authDescription() string {
	if g.method == "private_key_jwt" {
		return ", authenticated with private_key_jwt (a client assertion signed with --oauth-private-key)"
	}
	if g.secret == "" {
		return ""
	}
	style, _ := g.authStyle()
	method, why := "client_secret_basic", ""
	if style != oauth2.AuthStyleInHeader {
		method = "client_secret_post"
	}
	switch {
	case g.method != "" && g.method != "none":
		why = "as registered"
	case len(g.as.TokenAuthMethods) == 0:
		why = "the default: the metadata lists no token_endpoint_auth_methods_supported"
	default:
		why = "token_endpoint_auth_methods_supported lists " + strings.Join(g.as.TokenAuthMethods, ", ")
	}
	return ", authenticated with " + method + " (" + why + ")"
}

// clientAuth returns the form parameters that authenticate g's client with
// private_key_jwt (a fresh client assertion), or nil for another method.
// The assertion goes to Config.OnSecret before it is used.
func (f *flow) clientAuth(g grant) (url.Values, error) {
	key := f.a.cfg.PrivateKey
	if g.method != "private_key_jwt" || key == nil {
		return nil, nil
	}
	if m := g.as.TokenAuthMethods; len(m) > 0 && !slices.Contains(m, "private_key_jwt") {
		return nil, &Error{Step: "assertion", Msg: fmt.Sprintf("--oauth-private-key: the authorization server's token_endpoint_auth_methods_supported lists %s, not private_key_jwt", strings.Join(m, ", ")), Err: ErrKeyType}
	}
	alg, err := signingAlgorithm(key, g.as.TokenAuthSigningAlgs)
	if err != nil {
		return nil, &Error{Step: "assertion", Msg: "--oauth-private-key: " + err.Error(), Err: err}
	}
	aud := g.as.Issuer
	if f.a.cfg.AssertionAudience == AudienceTokenEndpoint {
		aud = g.as.TokenEndpoint
	}
	a, err := clientAssertion(key, alg, g.clientID, aud, now())
	if err != nil {
		return nil, &Error{Step: "assertion", Msg: "--oauth-private-key: " + err.Error(), Err: err}
	}
	f.secret(a)
	return url.Values{"client_assertion_type": {assertionTypeJWT}, "client_assertion": {a}}, nil
}

// machineClient fills g's client for a grant without a user: the
// registered Config.ClientID, authenticated by its secret or private key.
func (f *flow) machineClient(g *grant) error {
	cfg := f.a.cfg
	g.clientID, g.secret, g.method = cfg.ClientID, cfg.ClientSecret, ""
	if cfg.PrivateKey != nil {
		g.method = "private_key_jwt"
	}
	switch {
	case g.clientID == "":
		return &Error{Step: "token", Msg: fmt.Sprintf("the %s grant needs a registered client: pass --oauth-client-id", cfg.grantOf())}
	case g.secret == "" && cfg.PrivateKey == nil:
		return &Error{Step: "token", Msg: fmt.Sprintf("the %s grant needs the client's secret (--oauth-client-secret-env) or private key (--oauth-private-key)", cfg.grantOf())}
	}
	g.why = "client id " + g.clientID + " (--oauth-client-id)" + g.authDescription()
	return nil
}

// machineToken POSTs a token request of grant type grantType (params
// besides) at g's token endpoint, with g's client authentication and the
// resource, and keeps the tokens.
func (f *flow) machineToken(g grant, params url.Values) error {
	auth, err := f.clientAuth(g)
	if err != nil {
		return err
	}
	params.Set("resource", g.resource)
	for k, v := range auth {
		params[k] = v
	}
	style, secret := g.authStyle()
	cc := clientcredentials.Config{ClientID: g.clientID, ClientSecret: secret, TokenURL: g.as.TokenEndpoint,
		Scopes: strings.Fields(g.scope), EndpointParams: params, AuthStyle: style}
	tr := f.tokenTransport(g, nil)
	tok, err := cc.Token(tr.context(f.ctx))
	return f.took("token", g, tr, tok, err)
}

// clientCredentials runs the client credentials grant.
func (f *flow) clientCredentials(g grant) error {
	if err := f.machineClient(&g); err != nil {
		return err
	}
	f.grantNote("client credentials (--oauth-grant client-credentials: a machine client, no user); " + g.why)
	return f.machineToken(g, url.Values{})
}

// crossAppAccess runs cross-app access: the identity assertion exchanged
// at the identity provider for an ID-JAG naming this authorization server
// and resource (RFC 8693), then the ID-JAG presented with the JWT bearer
// grant (RFC 7523).
func (f *flow) crossAppAccess(g grant) error {
	cfg := f.a.cfg
	if err := f.machineClient(&g); err != nil {
		return err
	}
	f.secret(cfg.IDAssertion)
	f.secret(cfg.IdPClientSecret)
	f.grantNote(fmt.Sprintf("cross-app access (--oauth-grant cross-app-access): the identity assertion exchanged at the identity provider %s for an ID-JAG, then the JWT bearer grant at %s; %s",
		cfg.IdPTokenEndpoint, g.as.TokenEndpoint, g.why))
	if cfg.IDAssertion == "" {
		return &Error{Step: "assertion", Msg: "cross-app access needs an identity assertion (--oauth-id-token-env or --oauth-id-token-file)"}
	}
	if err := checkExpiry(cfg.IDAssertion, "the identity assertion", now()); err != nil {
		return &Error{Step: "assertion", Msg: err.Error() + ": get a fresh one from the identity provider", Err: err}
	}
	if cfg.IdPTokenEndpoint == "" {
		return &Error{Step: "token-exchange", Msg: "cross-app access needs the identity provider's token endpoint (--oauth-idp-token-endpoint)"}
	}
	if why := insecureEndpoint(cfg.IdPTokenEndpoint); why != "" {
		return &Error{Step: "token-exchange", Msg: fmt.Sprintf("the identity provider's token endpoint %s %s: refusing to proceed", cfg.IdPTokenEndpoint, why)}
	}
	subjectType := tokenTypeIDToken
	if !isJWT(cfg.IDAssertion) {
		subjectType = tokenTypeSAML2
	}
	form := url.Values{
		"grant_type": {grantTokenExchange}, "requested_token_type": {tokenTypeIDJAG},
		"subject_token": {cfg.IDAssertion}, "subject_token_type": {subjectType},
		"audience": {g.as.Issuer}, "resource": {g.resource},
	}
	if g.scope != "" {
		form.Set("scope", g.scope)
	}
	if cfg.IdPClientID != "" && cfg.IdPClientSecret == "" {
		form.Set("client_id", cfg.IdPClientID)
	}
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, cfg.IdPTokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return &Error{Step: "token-exchange", Msg: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if cfg.IdPClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(cfg.IdPClientID), url.QueryEscape(cfg.IdPClientSecret))
	}
	var out struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := f.postJSON(req, "token-exchange", &out); err != nil {
		return err
	}
	f.secret(out.AccessToken)
	switch {
	case out.AccessToken == "":
		return &Error{Step: "token-exchange", Msg: "the identity provider's answer has no access_token (the ID-JAG)"}
	case out.IssuedTokenType != tokenTypeIDJAG:
		return &Error{Step: "token-exchange", Msg: fmt.Sprintf("the identity provider issued a token of type %q, not an ID-JAG (%s)", out.IssuedTokenType, tokenTypeIDJAG)}
	}
	if err := checkExpiry(out.AccessToken, "the ID-JAG the identity provider issued", now()); err != nil {
		return &Error{Step: "token-exchange", Msg: err.Error(), Err: err}
	}
	return f.machineToken(g, url.Values{"grant_type": {grantJWTBearer}, "assertion": {out.AccessToken}})
}
