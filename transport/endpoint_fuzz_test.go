package transport

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/transport/oauth"
)

// FuzzEndpointOrigin: whatever a legacy server's endpoint event says,
// sonde's own client (which POSTs where url.Parse resolves it, against
// the SSE URL) accepts it only on the SSE URL's origin: the same scheme,
// host and port (the default made explicit), so its headers and token
// never go elsewhere; an https stream never accepts an http endpoint;
// a path-relative endpoint is always accepted.
func FuzzEndpointOrigin(f *testing.F) {
	for _, s := range []string{
		"/message?sessionId=1", "message", "//evil.example/m", "http://evil.example/m", "https://mcp.example/m",
		"https://mcp.example:443/m", "http://mcp.example/m", "https://MCP.example/m", "//mcp.example:443/x",
		`http:\\evil.example\m`, "https://mcp.example:444/m", "https://user:pw@mcp.example/m", "?x=1", "#f", "",
		"https://mcp.example./m", "https://%6dcp.example/m",
	} {
		f.Add("https://mcp.example/sse", s)
		f.Add("http://127.0.0.1:8080/sse", s)
	}
	f.Fuzz(func(t *testing.T, sse, data string) {
		base, err := url.Parse(sse)
		if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
			return
		}
		ep, err := base.Parse(strings.TrimSpace(data))
		if err != nil {
			return
		}
		h := &HTTP{url: base}
		why := h.foreignEndpoint(ep)
		same := oauth.SameOrigin(ep, base)
		if (why == "") != same {
			t.Fatalf("endpoint %q on %s: %s → refused %q, same origin %v", data, sse, ep, why, same)
		}
		if why == "" && strings.EqualFold(base.Scheme, "https") && !strings.EqualFold(ep.Scheme, "https") {
			t.Fatalf("endpoint %q on %s: a downgrade to %s accepted", data, sse, ep)
		}
		if d := strings.TrimSpace(data); d != "" && !strings.HasPrefix(d, "/") && !strings.Contains(d, ":") && !strings.Contains(d, `\`) && why != "" {
			t.Fatalf("a path-relative endpoint %q refused: %s", data, why)
		}
	})
}
