package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ecKey returns a fresh P-256 key and its PKCS #8 PEM.
func ecKey(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// verifyAssertion checks a client assertion's signature with pub and
// returns its claims.
func verifyAssertion(t *testing.T, s string, pub crypto.PublicKey) (jwt.Claims, jose.Header) {
	t.Helper()
	tok, err := jwt.ParseSigned(s, jwtAlgorithms)
	if err != nil {
		t.Fatalf("the assertion is not a JWT: %v", err)
	}
	var c jwt.Claims
	if err := tok.Claims(pub, &c); err != nil {
		t.Fatalf("the assertion's signature: %v", err)
	}
	return c, tok.Headers[0]
}

// The client assertion of private_key_jwt: signed with the key (ES256 for
// P-256), iss and sub the client id, aud the issuer alone, a fresh jti,
// iat now, exp a minute later: what the suite's client-credentials-jwt
// scenario verifies.
func TestClientAssertion_Claims(t *testing.T) {
	pemKey := func() []byte { _, p := ecKey(t); return p }()
	key, err := ParsePrivateKey(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	alg, err := signingAlgorithm(key, []string{"ES256"})
	if err != nil || alg != jose.ES256 {
		t.Fatalf("algorithm %q, %v; want ES256", alg, err)
	}
	at := time.Unix(1_800_000_000, 0)
	a, err := clientAssertion(key, alg, "client-1", "https://as.example.com", at)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := clientAssertion(key, alg, "client-1", "https://as.example.com", at)
	c, h := verifyAssertion(t, a, key.Public())
	c2, _ := verifyAssertion(t, b, key.Public())
	if h.Algorithm != "ES256" {
		t.Errorf("alg %q", h.Algorithm)
	}
	if c.Issuer != "client-1" || c.Subject != "client-1" {
		t.Errorf("iss %q sub %q, want the client id", c.Issuer, c.Subject)
	}
	if !slices.Equal([]string(c.Audience), []string{"https://as.example.com"}) {
		t.Errorf("aud %v, want the issuer alone", c.Audience)
	}
	if c.ID == "" || c.ID == c2.ID {
		t.Errorf("jti %q then %q: want a fresh one each time", c.ID, c2.ID)
	}
	if !c.IssuedAt.Time().Equal(at) || !c.Expiry.Time().Equal(at.Add(AssertionLifetime)) {
		t.Errorf("iat %v exp %v, want %v and a minute later", c.IssuedAt.Time(), c.Expiry.Time(), at)
	}
	// A minute later the assertion is no longer valid for the audience.
	if err := c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{"https://as.example.com"}, Time: at.Add(2 * time.Minute)}, 0); !errors.Is(err, jwt.ErrExpired) {
		t.Errorf("two minutes later: %v, want expired", err)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{"https://as.example.com/token"}, Time: at}, 0); err == nil {
		t.Error("the assertion is valid for the token endpoint's URL too: want the issuer only")
	}
}

// The keys sonde refuses, each with ErrKeyType and without the key in the
// message; those it takes, with their algorithm.
func TestParsePrivateKey(t *testing.T) {
	ec, ecPEM := ecKey(t)
	pubDER, _ := x509.MarshalPKIXPublicKey(ec.Public())
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	p224DER, _ := x509.MarshalECPrivateKey(p224)
	rsa1024, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKCS8PrivateKey(edKey)
	for _, tc := range []struct {
		name, pem, want string
	}{
		{"not PEM", "hello", "no PEM block"},
		{"public key", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})), "not a private key"},
		{"P-224", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: p224DER})), "P-224"},
		{"RSA 1024", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsa1024)})), "1024-bit"},
		{"damaged", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "PRIVATE KEY"},
	} {
		_, err := ParsePrivateKey([]byte(tc.pem))
		if !errors.Is(err, ErrKeyType) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want ErrKeyType saying %q", tc.name, err, tc.want)
		}
		if err != nil && len(tc.pem) > 40 && strings.Contains(err.Error(), tc.pem[30:40]) {
			t.Errorf("%s: the error shows the key: %v", tc.name, err)
		}
	}
	for _, tc := range []struct {
		pem  []byte
		want jose.SignatureAlgorithm
	}{{ecPEM, jose.ES256}, {pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: edDER}), jose.EdDSA}} {
		key, err := ParsePrivateKey(tc.pem)
		if err != nil {
			t.Fatal(err)
		}
		if alg, err := signingAlgorithm(key, nil); alg != tc.want || err != nil {
			t.Errorf("algorithm %q, %v; want %q", alg, err, tc.want)
		}
	}
	// A key whose algorithm the authorization server does not list.
	key, _ := ParsePrivateKey(ecPEM)
	if _, err := signingAlgorithm(key, []string{"RS256", "PS256"}); !errors.Is(err, ErrKeyType) || !strings.Contains(err.Error(), "ES256") {
		t.Errorf("an EC key where only RSA is listed: %v", err)
	}
}

// signedJWT is a JWT signed with a fresh key, with exp at exp.
func signedJWT(t *testing.T, exp time.Time) string {
	t.Helper()
	k, _ := ecKey(t)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(jwt.Claims{Subject: "user", Expiry: jwt.NewNumericDate(exp)}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// An identity assertion past its exp is refused; one not yet expired, or
// one that is no JWT (a SAML assertion) passes.
func TestCheckExpiry(t *testing.T) {
	at := time.Now()
	old := signedJWT(t, at.Add(-time.Hour))
	err := checkExpiry(old, "the identity assertion", at)
	if !errors.Is(err, ErrExpired) || strings.Contains(err.Error(), old) {
		t.Errorf("expired: %v", err)
	}
	if err := checkExpiry(signedJWT(t, at.Add(time.Hour)), "x", at); err != nil {
		t.Errorf("valid: %v", err)
	}
	if err := checkExpiry(signedJWT(t, at.Add(-10*time.Second)), "x", at); err != nil {
		t.Errorf("within the clock skew: %v", err)
	}
	if err := checkExpiry("PHNhbWw6QXNzZXJ0aW9uPjwvc2FtbDpBc3NlcnRpb24-", "x", at); err != nil {
		t.Errorf("SAML: %v", err)
	}
}

// machineDiscovery is what discovery found for a machine grant at the
// authorization server as, whose token endpoint is tokenURL.
func machineDiscovery(as, tokenURL string, methods ...string) *Discovery {
	return &Discovery{
		PRM: &ProtectedResourceMetadata{Resource: "http://127.0.0.1:1/mcp", AuthorizationServers: []string{as}},
		AS:  &ServerMetadata{Issuer: as, TokenEndpoint: tokenURL, TokenAuthMethods: methods},
	}
}

// secretsOf collects what a Config hands to OnSecret.
func secretsOf(cfg *Config) func() []string {
	var mu sync.Mutex
	var got []string
	cfg.OnSecret = func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() }
	return func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

// eventsShow reports whether any event holds s.
func eventsShow(events []Event, s string) bool {
	for _, ev := range events {
		b, _ := json.Marshal(ev)
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// Client credentials with private_key_jwt: grant_type, the assertion type,
// an assertion for the issuer signed with the key, the resource; the
// assertion goes to OnSecret and into no event, and the grant line says
// which grant and how the client authenticates.
func TestClientCredentials_PrivateKeyJWT(t *testing.T) {
	ecPriv, pemKey := ecKey(t)
	key, _ := ParsePrivateKey(pemKey)
	var form map[string][]string
	srv := newTokenServer(t, `{"access_token":"cc-token","token_type":"Bearer"}`, func(_ http.ResponseWriter, r *http.Request) bool {
		form = r.PostForm
		return true
	})
	issuer := srv + "/as"
	var grantLine string
	cfg := &Config{Grant: GrantClientCredentials, ClientID: "machine", PrivateKey: key, OnGrant: func(g string) { grantLine = g }}
	secrets := secretsOf(cfg)
	a, events := testAuthorizer(t, cfg)
	if err := a.Authorize(t.Context(), "", machineDiscovery(issuer, srv+"/token", "private_key_jwt"), false); err != nil {
		t.Fatal(err)
	}
	if a.Token() != "cc-token" {
		t.Errorf("token %q", a.Token())
	}
	get := func(k string) string {
		if v := form[k]; len(v) == 1 {
			return v[0]
		}
		return ""
	}
	if get("grant_type") != "client_credentials" || get("client_assertion_type") != assertionTypeJWT || get("client_id") != "machine" || get("resource") != "http://127.0.0.1:1/mcp" {
		t.Errorf("form %v", form)
	}
	c, _ := verifyAssertion(t, get("client_assertion"), ecPriv.Public())
	if c.Issuer != "machine" || c.Subject != "machine" || !slices.Equal([]string(c.Audience), []string{issuer}) {
		t.Errorf("claims %+v", c)
	}
	if !slices.Contains(secrets(), get("client_assertion")) || !slices.Contains(secrets(), "cc-token") {
		t.Error("the assertion or the token did not go to OnSecret")
	}
	if eventsShow(*events, get("client_assertion")) {
		t.Error("an event shows the assertion")
	}
	if !strings.Contains(grantLine, "client credentials") || !strings.Contains(grantLine, "private_key_jwt") {
		t.Errorf("grant line %q", grantLine)
	}
}

// Client credentials with a secret: client_secret_basic, and the grant line
// says why (the metadata's methods).
func TestClientCredentials_Basic(t *testing.T) {
	var user, pass, grantType string
	srv := newTokenServer(t, `{"access_token":"cc-token","token_type":"Bearer"}`, func(_ http.ResponseWriter, r *http.Request) bool {
		user, pass, _ = r.BasicAuth()
		grantType = r.PostForm.Get("grant_type")
		return true
	})
	var grantLine string
	cfg := &Config{Grant: GrantClientCredentials, ClientID: "machine", ClientSecret: "s3cret", OnGrant: func(g string) { grantLine = g }}
	a, events := testAuthorizer(t, cfg)
	if err := a.Authorize(t.Context(), "", machineDiscovery(srv, srv+"/token", "client_secret_basic"), false); err != nil {
		t.Fatal(err)
	}
	if user != "machine" || pass != "s3cret" || grantType != "client_credentials" {
		t.Errorf("basic %q:%q, grant_type %q", user, pass, grantType)
	}
	if !strings.Contains(grantLine, "client_secret_basic (token_endpoint_auth_methods_supported lists client_secret_basic)") {
		t.Errorf("grant line %q", grantLine)
	}
	if eventsShow(*events, "s3cret") {
		t.Error("an event shows the secret")
	}
}

// The refusals before any token request: a token endpoint over plain http
// off loopback (for every grant), private_key_jwt where the server lists
// other methods, an expired identity assertion, an identity provider's
// endpoint over plain http off loopback.
func TestMachineGrants_Refusals(t *testing.T) {
	_, pemKey := ecKey(t)
	key, _ := ParsePrivateKey(pemKey)
	var hits int
	srv := newTokenServer(t, `{"access_token":"t","token_type":"Bearer"}`, func(http.ResponseWriter, *http.Request) bool { hits++; return true })
	for _, tc := range []struct {
		name       string
		cfg        *Config
		d          *Discovery
		step, want string
		is         error
	}{
		{"http token endpoint", &Config{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s"},
			machineDiscovery("http://as.example.com", "http://as.example.com/token"), "discovery", "is not https", nil},
		{"http token endpoint, cross-app", &Config{Grant: GrantCrossAppAccess, ClientID: "c", ClientSecret: "s", IDAssertion: "x", IdPTokenEndpoint: srv},
			machineDiscovery("http://as.example.com", "http://as.example.com/token"), "discovery", "is not https", nil},
		{"private_key_jwt not listed", &Config{Grant: GrantClientCredentials, ClientID: "c", PrivateKey: key},
			machineDiscovery(srv, srv+"/token", "client_secret_basic"), "assertion", "not private_key_jwt", ErrKeyType},
		{"wrong key type", &Config{Grant: GrantClientCredentials, ClientID: "c", PrivateKey: key},
			func() *Discovery {
				d := machineDiscovery(srv, srv+"/token")
				d.AS.TokenAuthSigningAlgs = []string{"RS256"}
				return d
			}(), "assertion", "lists only RS256", ErrKeyType},
		{"expired identity assertion", &Config{Grant: GrantCrossAppAccess, ClientID: "c", ClientSecret: "s", IDAssertion: signedJWT(t, time.Now().Add(-time.Hour)), IdPTokenEndpoint: srv + "/idp"},
			machineDiscovery(srv, srv+"/token"), "assertion", "expired", ErrExpired},
		{"http identity provider", &Config{Grant: GrantCrossAppAccess, ClientID: "c", ClientSecret: "s", IDAssertion: "x", IdPTokenEndpoint: "http://idp.example.com/token"},
			machineDiscovery(srv, srv+"/token"), "token-exchange", "is not https", nil},
		{"no secret", &Config{Grant: GrantClientCredentials, ClientID: "c"},
			machineDiscovery(srv, srv+"/token"), "token", "--oauth-client-secret-env", nil},
	} {
		hits = 0
		a, _ := testAuthorizer(t, tc.cfg)
		err := a.Authorize(t.Context(), "", tc.d, false)
		var oe *Error
		if !errors.As(err, &oe) || oe.Step != tc.step || !strings.Contains(oe.Msg, tc.want) {
			t.Errorf("%s: %v; want step %s saying %q", tc.name, err, tc.step, tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.name, err, tc.is)
		}
		if hits != 0 {
			t.Errorf("%s: %d requests sent before the refusal", tc.name, hits)
		}
	}
}

// Cross-app access: the token exchange at the identity provider (the
// identity assertion, its type, the requested ID-JAG, the authorization
// server's issuer as audience, the resource), then the JWT bearer grant
// with the ID-JAG and client_secret_basic. The assertion and the ID-JAG go
// to OnSecret and into no event.
func TestCrossAppAccess(t *testing.T) {
	idToken := signedJWT(t, time.Now().Add(time.Hour))
	jag := signedJWT(t, time.Now().Add(5*time.Minute))
	var exchange, bearer map[string][]string
	var user string
	idp := newTokenServer(t, `{"access_token":"`+jag+`","issued_token_type":"`+tokenTypeIDJAG+`","token_type":"N_A"}`, func(_ http.ResponseWriter, r *http.Request) bool {
		exchange = r.PostForm
		return true
	})
	as := newTokenServer(t, `{"access_token":"xaa-token","token_type":"Bearer"}`, func(_ http.ResponseWriter, r *http.Request) bool {
		bearer = r.PostForm
		user, _, _ = r.BasicAuth()
		return true
	})
	cfg := &Config{Grant: GrantCrossAppAccess, ClientID: "xaa", ClientSecret: "xaa-secret", IDAssertion: idToken, IdPTokenEndpoint: idp + "/token", IdPClientID: "idp-client"}
	secrets := secretsOf(cfg)
	a, events := testAuthorizer(t, cfg)
	if err := a.Authorize(t.Context(), "", machineDiscovery(as, as+"/token", "client_secret_basic"), false); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"grant_type": grantTokenExchange, "requested_token_type": tokenTypeIDJAG, "subject_token": idToken,
		"subject_token_type": tokenTypeIDToken, "audience": as, "resource": "http://127.0.0.1:1/mcp", "client_id": "idp-client"}
	for k, v := range want {
		if got := exchange[k]; len(got) != 1 || got[0] != v {
			t.Errorf("token exchange %s = %v, want %q", k, got, v)
		}
	}
	if g := bearer["grant_type"]; len(g) != 1 || g[0] != grantJWTBearer || bearer["assertion"][0] != jag || user != "xaa" {
		t.Errorf("JWT bearer grant %v as %q", bearer, user)
	}
	if a.Token() != "xaa-token" {
		t.Errorf("token %q", a.Token())
	}
	for _, s := range []string{idToken, jag} {
		if !slices.Contains(secrets(), s) {
			t.Error("an assertion did not go to OnSecret")
		}
		if eventsShow(*events, s) {
			t.Error("an event shows an assertion")
		}
	}
}

// An ID-JAG the identity provider issued already expired, or a token of
// another type, is refused before the authorization server sees it.
func TestCrossAppAccess_BadJAG(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"access_token":"` + signedJWT(t, time.Now().Add(-time.Hour)) + `","issued_token_type":"` + tokenTypeIDJAG + `"}`, "expired"},
		{`{"access_token":"abc","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`, "not an ID-JAG"},
	} {
		idp := newTokenServer(t, tc.body, nil)
		var hits int
		as := newTokenServer(t, `{"access_token":"t"}`, func(http.ResponseWriter, *http.Request) bool { hits++; return true })
		a, _ := testAuthorizer(t, &Config{Grant: GrantCrossAppAccess, ClientID: "c", ClientSecret: "s", IDAssertion: "saml", IdPTokenEndpoint: idp})
		err := a.Authorize(t.Context(), "", machineDiscovery(as, as+"/token"), false)
		var oe *Error
		if !errors.As(err, &oe) || oe.Step != "token-exchange" || !strings.Contains(oe.Msg, tc.want) || hits != 0 {
			t.Errorf("%v (%d requests to the authorization server); want token-exchange saying %q", err, hits, tc.want)
		}
	}
}

// The code grant's client: a client metadata document where the server
// supports them (sonde's by default, or the URL given), the id given
// otherwise; the grant line says which and why.
func TestRegister_ClientIDMetadataDocument(t *testing.T) {
	for _, tc := range []struct {
		clientID string
		cimd     bool
		want     string
		why      string
	}{
		{"", true, DefaultClientMetadataURL, "sonde's client metadata document"},
		{"https://app.example.com/client.json", true, "https://app.example.com/client.json", "which the authorization server supports"},
		{"registered", true, "registered", "(--oauth-client-id)"},
		{"https://app.example.com/client.json", false, "https://app.example.com/client.json", "used as given"},
	} {
		a, _ := testAuthorizer(t, &Config{ClientID: tc.clientID})
		g := grant{as: &ServerMetadata{Issuer: "https://as.example.com", ClientIDMetadataDocument: tc.cimd}}
		if err := testFlow(t, a).register(&g); err != nil {
			t.Fatal(err)
		}
		if g.clientID != tc.want || !strings.Contains(g.why, tc.why) {
			t.Errorf("%q (cimd %v): client %q, %q; want %q saying %q", tc.clientID, tc.cimd, g.clientID, g.why, tc.want, tc.why)
		}
	}
	for _, bad := range []string{"http://app.example.com/c.json", "https://app.example.com", "https://app.example.com/c.json#x", "https://u:p@app.example.com/c.json", "https://app.example.com/a/../c.json"} {
		if CheckClientMetadataURL(bad) == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if err := CheckClientMetadataURL(DefaultClientMetadataURL); err != nil {
		t.Error(err)
	}
}

// docs/client-metadata.json is the document at DefaultClientMetadataURL:
// it names that URL, a public client with the code grant, and the loopback
// redirect the flow listens on (any port).
func TestDefaultClientMetadataDocument(t *testing.T) {
	b, err := os.ReadFile("../../docs/client-metadata.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClientID     string   `json:"client_id"`
		RedirectURIs []string `json:"redirect_uris"`
		GrantTypes   []string `json:"grant_types"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	lb, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer lb.close()
	port := lb.redirect[strings.LastIndex(lb.redirect, ":"):]
	port = port[:strings.Index(port, "/")]
	if doc.ClientID != DefaultClientMetadataURL || doc.AuthMethod != "none" ||
		!slices.Contains(doc.GrantTypes, "authorization_code") || !slices.Contains(doc.GrantTypes, "refresh_token") ||
		!slices.Equal(doc.RedirectURIs, []string{strings.Replace(lb.redirect, port, "", 1)}) {
		t.Errorf("docs/client-metadata.json: %+v; redirect %s", doc, lb.redirect)
	}
}

// An identity provider that echoes the identity assertion in its error
// does not bring it into sonde's error.
func TestCrossAppAccess_ErrorScrubbed(t *testing.T) {
	idToken := signedJWT(t, time.Now().Add(time.Hour))
	idp := newTokenServer(t, "", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		b, _ := json.Marshal(map[string]string{"error": "invalid_grant", "error_description": "bad subject_token " + r.PostForm.Get("subject_token")})
		w.Write(b)
		return false
	})
	as := newTokenServer(t, `{"access_token":"t"}`, nil)
	a, _ := testAuthorizer(t, &Config{Grant: GrantCrossAppAccess, ClientID: "c", ClientSecret: "s3cret", IDAssertion: idToken, IdPTokenEndpoint: idp})
	err := a.Authorize(t.Context(), "", machineDiscovery(as, as+"/token"), false)
	var oe *Error
	if !errors.As(err, &oe) || oe.Step != "token-exchange" || !strings.Contains(oe.Msg, "invalid_grant (bad subject_token «redacted»)") || strings.Contains(err.Error(), idToken) {
		t.Errorf("%v", err)
	}
}

// A machine grant whose token the server later refuses runs again (no
// user to bother, no refresh token to spend).
func TestClientCredentials_RunsAgain(t *testing.T) {
	var hits int
	srv := newTokenServer(t, `{"access_token":"cc-token","token_type":"Bearer"}`, func(http.ResponseWriter, *http.Request) bool { hits++; return true })
	a, _ := testAuthorizer(t, &Config{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s"})
	d := machineDiscovery(srv, srv+"/token")
	if err := a.Authorize(t.Context(), "", d, false); err != nil {
		t.Fatal(err)
	}
	if err := a.Authorize(t.Context(), "cc-token", d, false); err != nil || hits != 2 {
		t.Errorf("after a refusal: %v, %d token requests; want 2", err, hits)
	}
}

// --oauth-assertion-audience token-endpoint: the assertion's aud is the
// token endpoint's URL instead of the issuer.
func TestClientAssertion_TokenEndpointAudience(t *testing.T) {
	ecPriv, pemKey := ecKey(t)
	key, _ := ParsePrivateKey(pemKey)
	var assertion string
	srv := newTokenServer(t, `{"access_token":"cc-token","token_type":"Bearer"}`, func(_ http.ResponseWriter, r *http.Request) bool {
		assertion = r.PostForm.Get("client_assertion")
		return true
	})
	a, _ := testAuthorizer(t, &Config{Grant: GrantClientCredentials, ClientID: "m", PrivateKey: key, AssertionAudience: AudienceTokenEndpoint})
	if err := a.Authorize(t.Context(), "", machineDiscovery(srv, srv+"/token"), false); err != nil {
		t.Fatal(err)
	}
	if c, _ := verifyAssertion(t, assertion, ecPriv.Public()); !slices.Equal([]string(c.Audience), []string{srv + "/token"}) {
		t.Errorf("aud %v, want the token endpoint", c.Audience)
	}
}
