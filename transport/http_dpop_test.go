package transport

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/sonde-mcp/sonde/transport/oauth"
)

// dpopServer is a loopback MCP server that is its own authorization server
// (client credentials) and wants DPoP with nonces: the token endpoint
// answers a proof without its nonce 400 use_dpop_nonce, /mcp answers a
// valid DPoP request without its nonce 401 use_dpop_nonce; both give a
// DPoP-Nonce. It checks each proof (typ, signature by its own jwk, htm,
// htu, ath against the token) and keeps what it saw.
type dpopServer struct {
	t    *testing.T
	url  string
	mu   sync.Mutex
	seen []string // "PATH scheme nonce" of each proofed request
	bad  []string // what was wrong with a proof
}

func newDPoPServer(t *testing.T) *dpopServer {
	s := &dpopServer{t: t}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *dpopServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		writeTestJSON(w, 200, map[string]any{"resource": s.url + "/mcp", "authorization_servers": []string{s.url}})
	case "/.well-known/oauth-authorization-server":
		writeTestJSON(w, 200, map[string]any{"issuer": s.url, "token_endpoint": s.url + "/token", "dpop_signing_alg_values_supported": []string{"ES256"}})
	case "/token":
		if nonce := s.proof(r, ""); nonce != "as-1" {
			w.Header().Set("DPoP-Nonce", "as-1")
			writeTestJSON(w, 400, map[string]string{"error": "use_dpop_nonce"})
			return
		}
		writeTestJSON(w, 200, map[string]any{"access_token": "bound-token", "token_type": "DPoP", "expires_in": 60})
	case "/mcp":
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if token == "" {
			w.Header().Set("WWW-Authenticate", `DPoP resource_metadata="`+s.url+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(401)
			return
		}
		if nonce := s.proof(r, token); scheme != "DPoP" || nonce != "rs-1" {
			w.Header().Set("DPoP-Nonce", "rs-1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"d","version":"0"}}}`)
	default:
		w.WriteHeader(404)
	}
}

// proof checks r's DPoP proof (bound to token when not "") and returns its
// nonce.
func (s *dpopServer) proof(r *http.Request, token string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sig, err := jose.ParseSignedCompact(r.Header.Get("DPoP"), []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		s.bad = append(s.bad, r.URL.Path+": "+err.Error())
		return ""
	}
	h := sig.Signatures[0].Protected
	payload, err := sig.Verify(h.JSONWebKey)
	var c struct{ HTM, HTU, ATH, Nonce, JTI string }
	if err != nil || json.Unmarshal(payload, &c) != nil || h.ExtraHeaders["typ"] != "dpop+jwt" || !h.JSONWebKey.IsPublic() {
		s.bad = append(s.bad, fmt.Sprintf("%s: proof %v %s", r.URL.Path, err, payload))
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	wantATH := base64.RawURLEncoding.EncodeToString(sum[:])
	if token == "" {
		wantATH = ""
	}
	if c.HTM != r.Method || c.HTU != s.url+r.URL.Path || c.ATH != wantATH || c.JTI == "" {
		s.bad = append(s.bad, fmt.Sprintf("%s: claims %s", r.URL.Path, payload))
	}
	s.seen = append(s.seen, r.URL.Path+" "+c.Nonce)
	return c.Nonce
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// A DPoP session end to end: the 401's DPoP challenge starts the client
// credentials grant; the token request is retried once with the
// authorization server's nonce; initialize goes with the DPoP scheme and a
// proof bound to the token, is refused 401 use_dpop_nonce, and is sent
// again once with the MCP server's nonce. The events show the proofs
// (decoded, never the token) and both retries.
func TestOAuth_DPoPNonceRetries(t *testing.T) {
	s := newDPoPServer(t)
	h, rec := dialRec(t, HTTPConfig{URL: s.url + "/mcp", AuthTimeout: 5 * time.Second,
		OAuth: &oauth.Config{ClientID: "c", ClientSecret: "sekrit", Grant: oauth.GrantClientCredentials, Timeout: 20 * time.Second}})
	initOK(t, h)
	s.mu.Lock()
	seen, bad := strings.Join(s.seen, ", "), s.bad
	s.mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("bad proofs: %v", bad)
	}
	// One origin here: the authorization server's nonce is the MCP
	// server's until it gives its own (a nonce is per origin).
	if want := "/token , /token as-1, /mcp as-1, /mcp rs-1"; seen != want {
		t.Errorf("proofed requests %q, want %q", seen, want)
	}
	rec.mu.Lock()
	var shown []string
	for _, ev := range rec.events {
		shown = append(shown, fmt.Sprintf("%s %s %d %s %s", ev.Method, ev.URL, ev.Status, strings.Join(ev.Header, " | "), ev.Note))
	}
	rec.mu.Unlock()
	all := strings.Join(shown, "\n")
	for _, want := range []string{"> Authorization: DPoP «redacted»", "> DPoP: «proof ES256", "nonce=rs-1", "< DPoP-Nonce: rs-1", "HTTP 401 use_dpop_nonce", "HTTP 400 use_dpop_nonce"} {
		if !strings.Contains(all, want) {
			t.Errorf("events lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "bound-token") || strings.Contains(all, "sekrit") {
		t.Errorf("a secret is shown:\n%s", all)
	}
}
