package mcpserver

import (
	"crypto/subtle"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/loopback"
)

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Token is the bearer token every request must carry (required).
	Token string
	// AllowRemote accepts a Host header that is not loopback (sonde mcp
	// --listen on another address with --allow-remote). Origin stays
	// checked: a web page's Origin must be this server's own.
	AllowRemote bool
}

// Handler serves the MCP endpoint over Streamable HTTP, behind the checks
// the MCP security guidance asks of a local server: the Host header must
// name this machine (DNS rebinding) unless AllowRemote, an Origin header
// must be loopback or this server's own origin (403 otherwise), and
// every request must carry "Authorization: Bearer TOKEN" (401 without
// it).
func (s *Server) Handler(o HTTPOptions) http.Handler {
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{DisableLocalhostProtection: true}) // checked below, the same for every address
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !o.AllowRemote && !loopback.Host(r.Host):
			http.Error(w, "sonde mcp: forbidden: the Host header does not name this machine", http.StatusForbidden)
		case !originAllowed(r):
			http.Error(w, "sonde mcp: forbidden: requests from web pages of other origins are refused", http.StatusForbidden)
		case !bearerOK(r, o.Token):
			w.Header().Set("WWW-Authenticate", `Bearer realm="sonde mcp"`)
			http.Error(w, "sonde mcp: unauthorized: send the token sonde mcp printed at start as Authorization: Bearer TOKEN", http.StatusUnauthorized)
		default:
			inner.ServeHTTP(w, r)
		}
	})
}

// originAllowed: no Origin (not a browser), a loopback one, or this
// server's own (scheme://Host).
func originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if loopback.Origin(origin) {
		return true
	}
	return strings.EqualFold(origin, "http://"+r.Host) || strings.EqualFold(origin, "https://"+r.Host)
}

// bearerOK checks the Authorization header in constant time.
func bearerOK(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}
