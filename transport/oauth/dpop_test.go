package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// checkProof verifies a DPoP proof as a server does (RFC 9449 §4.3): a
// dpop+jwt JWS signed with ES256 by the public key in its jwk header (no
// private part), with its claims; it returns them.
func checkProof(t *testing.T, proof string) dpopClaims {
	t.Helper()
	sig, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("proof %q: %v", proof, err)
	}
	h := sig.Signatures[0].Protected
	if h.ExtraHeaders["typ"] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatalf("proof header: typ %v, jwk %+v", h.ExtraHeaders["typ"], h.JSONWebKey)
	}
	payload, err := sig.Verify(h.JSONWebKey.Key)
	if err != nil {
		t.Fatalf("the proof does not verify with its own jwk: %v", err)
	}
	var c dpopClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.JTI == "" || c.IAT == 0 {
		t.Fatalf("claims %s: %v", payload, err)
	}
	return c
}

// dpopTokenServer is a loopback token endpoint that wants a DPoP proof
// carrying its nonce: a proof without it gets 400 use_dpop_nonce and a
// DPoP-Nonce; one with it gets a token of tokenType. The claims of each
// proof are kept.
func dpopTokenServer(t *testing.T, tokenType string) (string, *[]dpopClaims) {
	var mu sync.Mutex
	var seen []dpopClaims
	srv := newTokenServer(t, fmt.Sprintf(`{"access_token":"at-123","token_type":%q}`, tokenType), func(w http.ResponseWriter, r *http.Request) bool {
		c := checkProof(t, r.Header.Get("DPoP"))
		mu.Lock()
		seen = append(seen, c)
		mu.Unlock()
		if c.Nonce != "n-1" {
			w.Header().Set("DPoP-Nonce", "n-1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"use_dpop_nonce"}`)
			return false
		}
		return true
	})
	return srv, &seen
}

// dpopFlow runs the client credentials grant against token endpoint srv,
// whose metadata lists ES256 for DPoP.
func dpopFlow(t *testing.T, srv string, mode DPoPMode) (*Authorizer, *[]Event, error) {
	var grantLine string
	a, events := testAuthorizer(t, &Config{ClientID: "c", ClientSecret: "s3cret", Grant: GrantClientCredentials, DPoP: mode,
		OnGrant: func(s string) { grantLine = s }})
	t.Cleanup(func() {
		if want := mode != DPoPNever; strings.Contains(grantLine, "tokens bound with DPoP") != want {
			t.Errorf("the grant line %q (DPoP %v)", grantLine, want)
		}
	})
	f := testFlow(t, a)
	g := grant{as: &ServerMetadata{Issuer: srv, TokenEndpoint: srv + "/token", DPoPSigningAlgs: []string{"ES256"}}, resource: "http://127.0.0.1:1/mcp"}
	if err := f.settleDPoP(&g); err != nil {
		return a, events, err
	}
	return a, events, f.clientCredentials(g)
}

// With an authorization server that lists ES256, the token request carries
// a proof (htm POST, htu the token endpoint, no ath); a use_dpop_nonce
// answer is retried once with a fresh proof carrying the nonce, both
// exchanges shown; the DPoP-bound token then goes with the DPoP scheme and
// a proof per request whose ath is the token's hash and whose htu has no
// query. Each proof has its own jti.
func TestDPoP_TokenNonceRetryAndResourceProof(t *testing.T) {
	srv, seen := dpopTokenServer(t, "DPoP")
	a, events, err := dpopFlow(t, srv, DPoPAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(*seen) != 2 || (*seen)[0].Nonce != "" || (*seen)[1].Nonce != "n-1" || (*seen)[0].JTI == (*seen)[1].JTI {
		t.Fatalf("token request proofs: %+v", *seen)
	}
	for _, c := range *seen {
		if c.HTM != "POST" || c.HTU != srv+"/token" || c.ATH != "" {
			t.Errorf("token proof claims %+v", c)
		}
	}
	var shown []string
	for _, ev := range *events {
		shown = append(shown, fmt.Sprintf("%d %s %s", ev.Status, strings.Join(ev.Header, " | "), ev.Note))
	}
	all := strings.Join(shown, "\n")
	for _, want := range []string{"400 ", "use_dpop_nonce", "< DPoP-Nonce: n-1", "nonce=n-1", "token: ok"} {
		if !strings.Contains(all, want) {
			t.Errorf("events lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, DowngradeNote) || strings.Contains(all, "at-123") || strings.Contains(all, "s3cret") {
		t.Errorf("events show a downgrade or a secret:\n%s", all)
	}
	mcp, _ := url.Parse("http://127.0.0.1:1/mcp?x=1#f")
	a.KeepNonce(mcp, "rs-9")
	c, err := a.Credential("POST", mcp)
	if err != nil || c.Scheme != "DPoP" || c.Token != "at-123" || c.Proof == nil {
		t.Fatalf("credential %+v, %v", c, err)
	}
	claims := checkProof(t, c.Proof.JWS)
	sum := sha256.Sum256([]byte("at-123"))
	if claims.HTU != "http://127.0.0.1:1/mcp" || claims.HTM != "POST" || claims.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) || claims.Nonce != "rs-9" {
		t.Errorf("resource proof claims %+v", claims)
	}
	if strings.Contains(c.Proof.Shown(), c.Proof.JWS) || !strings.Contains(c.Proof.Shown(), "ath=") {
		t.Errorf("shown proof %q", c.Proof.Shown())
	}
}

// A token asked for with a proof that comes back as Bearer is a downgrade:
// the token event's note says so, and the token goes as Bearer, with no
// proof.
func TestDPoP_BearerDowngrade(t *testing.T) {
	srv, _ := dpopTokenServer(t, "Bearer")
	a, events, err := dpopFlow(t, srv, DPoPAuto)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range *events {
		found = found || strings.Contains(ev.Note, DowngradeNote+"the token request carried a DPoP proof but the token came back with token_type Bearer")
	}
	if !found {
		t.Errorf("no downgrade note in %+v", *events)
	}
	mcp, _ := url.Parse("http://127.0.0.1:1/mcp")
	if c, _ := a.Credential("POST", mcp); c.Scheme != "Bearer" || c.Proof != nil {
		t.Errorf("credential %+v", c)
	}
}

// --oauth-dpop never sends no proof (the server then refuses the token
// request here); always refuses a server that does not list ES256.
func TestDPoP_Modes(t *testing.T) {
	srv := newTokenServer(t, `{"access_token":"at","token_type":"Bearer"}`, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("DPoP") != "" {
			t.Errorf("a proof was sent with DPoPNever")
		}
		return true
	})
	if _, _, err := dpopFlow(t, srv, DPoPNever); err != nil {
		t.Fatal(err)
	}
	a, _ := testAuthorizer(t, &Config{DPoP: DPoPAlways})
	g := grant{as: &ServerMetadata{Issuer: srv, TokenEndpoint: srv + "/token"}}
	if err := testFlow(t, a).settleDPoP(&g); err == nil || !strings.Contains(err.Error(), "lists (none), not ES256") {
		t.Errorf("always without ES256: %v", err)
	}
}

// A nonce is kept per origin: one server's never goes in a proof for
// another (nor for another port of the same host).
func TestDPoP_NoncePerOrigin(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := url.Parse("https://as.example/token")
	b, _ := url.Parse("https://mcp.example/mcp")
	c, _ := url.Parse("https://as.example:8443/token")
	if !k.setNonce(a, "for-a") || k.setNonce(a, "for-a") {
		t.Error("setNonce does not say whether the nonce is new")
	}
	for _, u := range []*url.URL{b, c} {
		p, err := k.proof("POST", u, "")
		if err != nil || p.claims.Nonce != "" {
			t.Errorf("proof for %s carries nonce %q (%v)", u, p.claims.Nonce, err)
		}
	}
	if p, _ := k.proof("POST", a, ""); checkProof(t, p.JWS).Nonce != "for-a" {
		t.Errorf("proof for %s lacks its nonce", a)
	}
}
