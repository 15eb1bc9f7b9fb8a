package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/go-jose/go-jose/v4"
)

// DPoP (RFC 9449; the MCP DPoP extension, SEP-1932): sender-constrained
// tokens. When the authorization server lists ES256 in
// dpop_signing_alg_values_supported (or Config.DPoP says always), sonde
// makes one ephemeral P-256 key per connection, sends a proof signed with
// it (a dpop+jwt JWS with the public key in its jwk header; claims jti,
// htm, htu, iat, and ath with an access token, nonce when the server gave
// one) on each token request and each request to the MCP server, and the
// access token with the DPoP scheme. A use_dpop_nonce answer (400 at the
// token endpoint, 401 at the MCP server) with a DPoP-Nonce header is
// retried once with a fresh proof carrying the nonce. The key never leaves
// memory; proofs are shown decoded, never whole.

// DPoPMode says when sonde uses DPoP (Config.DPoP).
type DPoPMode string

// The DPoP modes.
const (
	// DPoPAuto (the default, also for "") uses DPoP when the
	// authorization server's metadata lists ES256 in
	// dpop_signing_alg_values_supported.
	DPoPAuto DPoPMode = "auto"
	// DPoPAlways uses DPoP with every authorization server; one whose
	// metadata does not list ES256 is refused.
	DPoPAlways DPoPMode = "always"
	// DPoPNever never sends a proof: tokens are Bearer tokens.
	DPoPNever DPoPMode = "never"
)

// DPoPModes lists the modes, the default first.
var DPoPModes = []DPoPMode{DPoPAuto, DPoPAlways, DPoPNever}

// DowngradeNote starts the note of an event that shows a DPoP downgrade:
// a token asked for with a proof that came back as a Bearer token. Lint
// (rule dpop-downgrade) reads it in captures.
const DowngradeNote = "DPoP downgrade: "

// dpopAlg is the one algorithm sonde signs proofs with.
const dpopAlg = "ES256"

// dpopKey is a connection's ephemeral proof key and the nonces servers
// gave it, by origin (RFC 9449 §8, §9: a nonce is per server).
type dpopKey struct {
	key    *ecdsa.PrivateKey
	signer jose.Signer
	jkt    string // the RFC 7638 SHA-256 thumbprint of the public key

	mu     sync.Mutex
	nonces map[string]string
}

// newDPoPKey makes an ephemeral P-256 key and its signer.
func newDPoPKey() (*dpopKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, opts)
	if err != nil {
		return nil, err
	}
	tp, err := (&jose.JSONWebKey{Key: &key.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return &dpopKey{key: key, signer: signer, jkt: base64.RawURLEncoding.EncodeToString(tp), nonces: map[string]string{}}, nil
}

// dpopClaims are the claims of a proof (RFC 9449 §4.2).
type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// Proof is one DPoP proof: the JWS to send and what it says, for showing.
type Proof struct {
	JWS    string
	claims dpopClaims
	jkt    string
}

// Shown is the proof as an event shows it: its claims, not the JWS.
func (p Proof) Shown() string {
	s := fmt.Sprintf("«proof %s jkt=%s» htm=%s htu=%s jti=%s iat=%d", dpopAlg, p.jkt, p.claims.HTM, p.claims.HTU, p.claims.JTI, p.claims.IAT)
	if p.claims.ATH != "" {
		s += " ath=" + p.claims.ATH
	}
	if p.claims.Nonce != "" {
		s += " nonce=" + p.claims.Nonce
	}
	return s
}

// proof signs a proof for a request of method to target (its query and
// fragment dropped: RFC 9449 §4.2), bound to accessToken when not "", with
// the nonce target's origin last gave.
func (k *dpopKey) proof(method string, target *url.URL, accessToken string) (Proof, error) {
	htu := *target
	htu.RawQuery, htu.ForceQuery, htu.Fragment, htu.RawFragment, htu.User = "", false, "", "", nil
	c := dpopClaims{JTI: rand.Text(), HTM: method, HTU: htu.String(), IAT: now().Unix(), Nonce: k.nonce(target)}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		c.ATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return Proof{}, err
	}
	obj, err := k.signer.Sign(payload)
	if err != nil {
		return Proof{}, err
	}
	jws, err := obj.CompactSerialize()
	if err != nil {
		return Proof{}, err
	}
	return Proof{JWS: jws, claims: c, jkt: k.jkt}, nil
}

// origin is the key of u's nonce.
func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

// nonce is the nonce u's origin last gave ("" for none).
func (k *dpopKey) nonce(u *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[origin(u)]
}

// setNonce keeps the nonce u's origin gave (RFC 9449 §8.2: a server may
// give a new one in any answer). It reports whether it is new.
func (k *dpopKey) setNonce(u *url.URL, nonce string) bool {
	if nonce == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.nonces[origin(u)] == nonce {
		return false
	}
	k.nonces[origin(u)] = nonce
	return true
}

// wantsDPoP says whether the flow uses DPoP with authorization server as,
// or why it cannot (an error for DPoPAlways with a server that lists no
// ES256).
func (c *Config) wantsDPoP(as *ServerMetadata) (bool, error) {
	listed := slices.Contains(as.DPoPSigningAlgs, dpopAlg)
	switch c.DPoP {
	case DPoPNever:
		return false, nil
	case DPoPAlways:
		if !listed {
			return false, &Error{Step: "discovery", Msg: fmt.Sprintf("--oauth-dpop always: the authorization server's dpop_signing_alg_values_supported lists %s, not %s", orNone(strings.Join(as.DPoPSigningAlgs, ", ")), dpopAlg)}
		}
	}
	return listed, nil
}

// useDPoPNonce reports whether an answer asks for a DPoP nonce: its error
// (in the JSON body at the token endpoint, in the DPoP challenge at the MCP
// server) is use_dpop_nonce and it carries a DPoP-Nonce header.
func useDPoPNonce(errorCode, nonce string) bool {
	return errorCode == "use_dpop_nonce" && nonce != ""
}

// Credential is how a request to the MCP server carries the access token:
// Authorization: Scheme Token, and with the DPoP scheme a DPoP header
// holding Proof.
type Credential struct {
	Scheme string // "Bearer" or "DPoP"; "" for no token
	Token  string
	Proof  *Proof // nil unless Scheme is DPoP
}

// Credential returns the access token to send on a request of method to
// u, with a fresh proof when the token is DPoP-bound. A proof sonde
// cannot sign is an error (the token is not sent as Bearer instead).
func (a *Authorizer) Credential(method string, u *url.URL) (Credential, error) {
	a.mu.Lock()
	token, bound, key := a.access, a.bound, a.key
	a.mu.Unlock()
	switch {
	case token == "":
		return Credential{}, nil
	case !bound || key == nil:
		return Credential{Scheme: "Bearer", Token: token}, nil
	}
	p, err := key.proof(method, u, token)
	if err != nil {
		return Credential{}, fmt.Errorf("signing a DPoP proof: %w", err)
	}
	return Credential{Scheme: "DPoP", Token: token, Proof: &p}, nil
}

// KeepNonce keeps the DPoP-Nonce an answer from u's origin carried, for
// the next proofs to it; it reports whether the nonce is new. Without a
// proof key it does nothing.
func (a *Authorizer) KeepNonce(u *url.URL, nonce string) bool {
	a.mu.Lock()
	key := a.key
	a.mu.Unlock()
	return key != nil && key.setNonce(u, nonce)
}

// NonceChallenge reports whether a 401's WWW-Authenticate asks for a DPoP
// nonce (RFC 9449 §9: a DPoP challenge with error="use_dpop_nonce").
func NonceChallenge(wwwAuthenticate string) bool {
	for _, c := range ParseChallenges(wwwAuthenticate) {
		if strings.EqualFold(c.Scheme, "DPoP") && c.Params["error"] == "use_dpop_nonce" {
			return true
		}
	}
	return false
}

// proofKey returns the connection's proof key, made at first use.
func (a *Authorizer) proofKey() (*dpopKey, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.key == nil {
		k, err := newDPoPKey()
		if err != nil {
			return nil, err
		}
		a.key = k
	}
	return a.key, nil
}

// settleDPoP decides whether g's token requests carry proofs, and says so
// in the flow's events.
func (f *flow) settleDPoP(g *grant) error {
	use, err := f.a.cfg.wantsDPoP(g.as)
	if err != nil || !use {
		return err
	}
	key, err := f.a.proofKey()
	if err != nil {
		return &Error{Step: "discovery", Msg: "making the DPoP key: " + err.Error(), Err: err}
	}
	g.dpop = true
	why := "the authorization server lists ES256 in dpop_signing_alg_values_supported"
	if f.a.cfg.DPoP == DPoPAlways {
		why = "--oauth-dpop always"
	}
	f.dpop = "; tokens bound with DPoP (" + why + "), key jkt " + key.jkt
	f.a.note(Event{Stream: StreamFlow, URL: g.as.TokenEndpoint, Note: fmt.Sprintf("DPoP (%s): token requests and MCP requests carry proofs signed with an ephemeral P-256 key, jkt %s; the token is sent with the DPoP scheme", why, key.jkt)})
	return nil
}
