// Package oauth is the authorization side of sonde's HTTP transport (MCP
// authorization, 2025-11-25): discovery after a refusal (RFC 9728 protected
// resource metadata, RFC 8414 authorization server metadata, the
// WWW-Authenticate challenge) and the grants that get a token: the OAuth
// 2.1 authorization code flow with PKCE (a client ID metadata document's
// URL as client id where the server supports them, else RFC 7591 dynamic
// registration; a loopback redirect, the code exchange and refresh
// through golang.org/x/oauth2, the RFC 8707 resource parameter, step-up
// after a 403 insufficient_scope), client credentials, and cross-app
// access (RFC 8693 token exchange at the identity provider, then the RFC
// 7523 JWT bearer grant); a client authenticates with a secret or with
// private_key_jwt (assertions signed through go-jose). Tokens are bound
// to an ephemeral key with DPoP (RFC 9449) when the authorization server
// supports it (dpop.go).
//
// The transport imports this package, never the other way round: it asks
// a Discoverer what a refusal means, and an Authorizer for the token to
// send and for a new one after a refusal. What both do on the wire comes
// back as Events, without secrets, for the transport to show.
package oauth

import "time"

// The stream names of the Events.
const (
	// StreamDiscovery is the stream of discovery's GETs.
	StreamDiscovery = "auth"
	// StreamFlow is the stream of the flow's exchanges and notes.
	StreamFlow = "oauth"
)

// Event is one HTTP exchange of discovery or of the flow, or a note about
// them: the transport shows it as an HTTP event. Header lists the headers
// that matter ("> Name: value" sent, "< Name: value" received), secrets
// redacted; bodies that hold tokens are never in it.
type Event struct {
	Method   string // "" for a note
	URL      string
	Status   int // 0 when no response arrived
	Header   []string
	Duration time.Duration // until the response headers arrived
	Stream   string        // StreamDiscovery or StreamFlow
	Raw      []byte        // the start of a metadata document's body
	Note     string
}

// orNone is s, or "(none)" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
