package oauth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Authorization discovery: when a server refuses a request with 401 (or 403
// with error="insufficient_scope"), sonde finds out where a token would come
// from, as an MCP client does before the OAuth flow (which sonde runs only
// with Config set): the RFC 9728 protected resource metadata (PRM), then the
// RFC 8414 metadata of the first authorization server it names. Every
// failure is a problem of the diagnosis, never an error of its own.

// Discovery is what sonde learned about a server's authorization after
// it refused a request: the challenge of its WWW-Authenticate header, the
// protected resource metadata, the authorization server's metadata, and
// what went wrong on the way. Fields are empty when unknown.
type Discovery struct {
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
	ASURL string          `json:"as_url,omitempty"`
	AS    *ServerMetadata `json:"as,omitempty"`
	// LegacyAS says the PRM was not found and AS came from the root of the
	// server's own origin, where a 2025-03-26 server (its own authorization
	// server) serves it.
	LegacyAS bool `json:"legacy_as,omitempty"`
	// OtherOrigins lists the origins other than the MCP server's that
	// discovery fetched a document from (after redirects), in order: the
	// server chose them, so sonde says where it went.
	OtherOrigins []string `json:"other_origins,omitempty"`
	// Problems lists what discovery could not do or found wrong, in order.
	Problems []*Problem `json:"problems,omitempty"`
}

// ProtectedResourceMetadata is what sonde keeps of RFC 9728 protected
// resource metadata.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
}

// ServerMetadata is what sonde keeps of RFC 8414 authorization server
// metadata (or an OpenID Connect discovery document).
type ServerMetadata struct {
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
	// TokenAuthSigningAlgs is token_endpoint_auth_signing_alg_values_supported:
	// the JWS algorithms of private_key_jwt client assertions.
	TokenAuthSigningAlgs []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	// ClientIDMetadataDocument is client_id_metadata_document_supported
	// (2025-11-25: a client may use a URL as its client id).
	ClientIDMetadataDocument bool `json:"client_id_metadata_document_supported,omitempty"`
	// DPoPSigningAlgs is dpop_signing_alg_values_supported (RFC 9449
	// §5.1): the server takes DPoP proofs signed with these.
	DPoPSigningAlgs []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// S256 reports whether the server lists PKCE's S256 method. Without it an
// MCP client must refuse to proceed with the authorization flow.
func (m *ServerMetadata) S256() bool { return slices.Contains(m.CodeChallengeMethods, "S256") }

// ProblemKind classifies an Problem.
type ProblemKind uint8

// The ways discovery fails or finds the metadata wrong.
const (
	// ProblemNetwork: no answer (refused, reset, TLS, the deadline passed).
	ProblemNetwork ProblemKind = iota + 1
	// ProblemStatus: an answer with a status that is not 2xx.
	ProblemStatus
	// ProblemNotJSON: a body that is not a JSON object, or is over
	// MaxBodyBytes.
	ProblemNotJSON
	// ProblemMalformed: a JSON object of the wrong shape, or a URL that is
	// not an absolute http(s) URL.
	ProblemMalformed
	// ProblemMismatch: the PRM names another resource, or the metadata
	// another issuer, than the one asked about.
	ProblemMismatch
	// ProblemMissing: a required field is absent.
	ProblemMissing
	// ProblemNoS256: the authorization server does not list S256 in
	// code_challenge_methods_supported (or has no such field).
	ProblemNoS256
	// ProblemRefused: sonde refused to fetch a URL the server named: a
	// link-local address (169.254.0.0/16, fe80::/10), unless the MCP
	// server itself is on one, or too many redirects.
	ProblemRefused
)

// String returns the kind's name ("network", "status", "not-json", …).
func (k ProblemKind) String() string {
	switch k {
	case ProblemNetwork:
		return "network"
	case ProblemStatus:
		return "status"
	case ProblemNotJSON:
		return "not-json"
	case ProblemMalformed:
		return "malformed"
	case ProblemMismatch:
		return "mismatch"
	case ProblemMissing:
		return "missing"
	case ProblemNoS256:
		return "no-s256"
	case ProblemRefused:
		return "refused"
	}
	return fmt.Sprintf("ProblemKind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k ProblemKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Problem is one failure of discovery. It is an error, so a caller can
// use errors.As on Discovery.Err.
type Problem struct {
	Kind ProblemKind `json:"kind"`
	// URL is the document's URL, when the problem is about one.
	URL string `json:"url,omitempty"`
	// Status is the HTTP status of an ProblemStatus problem.
	Status int `json:"status,omitempty"`
	// Msg says what went wrong, in words.
	Msg string `json:"message"`
	Err error  `json:"-"`
}

// Error returns the message.
func (p *Problem) Error() string { return p.Msg }

// Unwrap returns the cause.
func (p *Problem) Unwrap() error { return p.Err }

// Err joins the problems into one error (nil when there are none).
func (a *Discovery) Err() error {
	errs := make([]error, len(a.Problems))
	for i, p := range a.Problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Summary says in one line what discovery found: "resource R, authorization
// server AS (S256 ok, dynamic registration at REG), scope a b", then the
// problems after "problems:", separated by " | ".
func (a *Discovery) Summary() string {
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
	if len(a.OtherOrigins) > 0 {
		parts = append(parts, "metadata fetched from another origin than the server's: "+strings.Join(a.OtherOrigins, " "))
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
func (a *Discovery) clone() *Discovery {
	c := *a
	c.Problems = slices.Clone(a.Problems)
	c.OtherOrigins = slices.Clone(a.OtherOrigins)
	return &c
}
