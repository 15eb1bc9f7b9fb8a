package lint

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"github.com/sonde-mcp/sonde/client"
)

// The rules over HTTP exchanges: the legacy version header
// (unnegotiated-version, checks.go), header-mismatch, accept-header and
// content-type. An exchange shows its headers as "> Name: value" (sent)
// and "< Name: value" (received): sonde's client shows the ones that
// matter (not its Accept, which always lists both types), a tap every
// request header.

// checkHTTP runs the exchange rules.
func (l *Linter) checkHTTP(ev client.Event) {
	l.versionHeader(ev)
	l.dpopDowngrade(ev)
	h := ev.HTTP
	if h.Method != http.MethodPost || h.Stream == "oauth" || h.Stream == "auth" {
		return // the OAuth flow's POSTs (registration, token) are not MCP's
	}
	sent, got := headers(h.Header, "> "), headers(h.Header, "< ")
	l.acceptHeader(ev, sent)
	if h.Status == http.StatusOK && h.ReqID.IsValid() && got["content-type"] == "" {
		l.addHTTP(ev, RuleContentType, client.In, "", fmt.Sprintf("HTTP %d response with no Content-Type header (it must say application/json or text/event-stream)", h.Status))
	}
	l.headerMismatch(ev, sent)
}

// acceptHeader: accept-header. A tap's exchange lists every request header:
// one with a Content-Type but no Accept sent none.
func (l *Linter) acceptHeader(ev client.Event, sent map[string]string) {
	accept, ok := sent["accept"]
	if !ok {
		if _, tapped := sent["content-type"]; !tapped {
			return // sonde's client: its Accept is not shown (it lists both)
		}
		l.addHTTP(ev, RuleAcceptHeader, client.Out, "", "POST without an Accept header (it must list application/json and text/event-stream)")
		return
	}
	var missing []string
	for _, t := range []string{"application/json", "text/event-stream"} {
		if !strings.Contains(strings.ToLower(accept), t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		l.addHTTP(ev, RuleAcceptHeader, client.Out, "> Accept: "+accept, "POST with Accept: "+bounded(accept, 100)+": it does not list "+strings.Join(missing, " or "))
	}
}

// headerMismatch: header-mismatch. The MCP-Protocol-Version and Mcp-Method
// headers of a modern request's POST against its body (the request, still
// pending when its exchange is noted).
func (l *Linter) headerMismatch(ev client.Event, sent map[string]string) {
	h := ev.HTTP
	if !h.ReqID.IsValid() {
		return
	}
	p, ok := l.pending[0][h.ReqID]
	if !ok || !p.modern {
		return
	}
	if v, ok := sent["mcp-protocol-version"]; ok && v != p.version {
		l.addHTTP(ev, RuleHeaderMismatch, client.Out, "> MCP-Protocol-Version: "+v,
			fmt.Sprintf("header MCP-Protocol-Version: %s, but the body's _meta says %q (the server must answer 400 with -32020 HeaderMismatch)", bounded(v, 64), p.version))
	}
	if v, ok := sent["mcp-method"]; ok && v != p.method {
		l.addHTTP(ev, RuleHeaderMismatch, client.Out, "> Mcp-Method: "+v,
			fmt.Sprintf("header Mcp-Method: %s, but the body's method is %q (the server must answer 400 with -32020 HeaderMismatch)", bounded(v, 64), p.method))
	}
	if v, ok := sent["mcp-name"]; ok && p.target != "" && headerValue(v) != p.target {
		l.addHTTP(ev, RuleHeaderMismatch, client.Out, "> Mcp-Name: "+v,
			fmt.Sprintf("header Mcp-Name: %s, but the body names %q (the server must answer 400 with -32020 HeaderMismatch)", bounded(v, 64), bounded(p.target, 64)))
	}
}

// headerValue decodes a header value sent as =?base64?…?= (how a
// non-ASCII name travels); any other value is itself.
func headerValue(v string) string {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if enc, ok2 := strings.CutSuffix(enc, "?="); ok && ok2 {
		if b, err := base64.StdEncoding.DecodeString(enc); err == nil {
			return string(b)
		}
	}
	return v
}

// headers reads the lines of one direction of an exchange, by lower-case
// name (the first of a repeated name).
func headers(lines []string, prefix string) map[string]string {
	out := map[string]string{}
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		name, value, found := strings.Cut(rest, ":")
		if !found {
			continue
		}
		key := strings.ToLower(strings.TrimSpace(name))
		if _, dup := out[key]; !dup {
			out[key] = strings.TrimSpace(value)
		}
	}
	return out
}

// addHTTP records a finding on an exchange; raw is the header line that
// shows it ("" for the exchange's first line).
func (l *Linter) addHTTP(ev client.Event, rule string, dir client.Direction, raw, detail string) {
	h := ev.HTTP
	if raw == "" {
		raw = h.Method + " " + h.URL
	}
	l.out = append(l.out, Finding{Rule: rule, Seq: ev.Seq, Time: ev.Time, Dir: dir, ID: h.ReqID, Method: h.Method, Raw: []byte(raw), Detail: detail})
}

// dpopDowngradeNote starts the note sonde's OAuth flow puts on a token
// exchange whose proof got a Bearer token (oauth.DowngradeNote; lint
// cannot import transport).
const dpopDowngradeNote = "DPoP downgrade: "

// dpopSeen is what a session's exchanges showed of DPoP.
type dpopSeen struct {
	required bool // a challenge asked for DPoP and not Bearer
	used     bool // a request sent Authorization: DPoP
	flagged  bool // a Bearer request was already found (once a session)
}

// dpopDowngrade: dpop-downgrade. The token exchange sonde noted as a
// downgrade; the first request that sends its token as Bearer after a
// DPoP-only challenge, or after the session sent it with the DPoP scheme.
func (l *Linter) dpopDowngrade(ev client.Event) {
	h := ev.HTTP
	if i := strings.Index(h.Note, dpopDowngradeNote); i >= 0 {
		l.addHTTP(ev, RuleDPoPDowngrade, client.In, "", bounded(h.Note[i+len(dpopDowngradeNote):], 300))
	}
	sent, got := headers(h.Header, "> "), headers(h.Header, "< ")
	if c := strings.ToLower(got["www-authenticate"]); authScheme(c, "dpop") && !authScheme(c, "bearer") {
		l.dpop.required = true
	}
	scheme, _, _ := strings.Cut(sent["authorization"], " ")
	switch {
	case strings.EqualFold(scheme, "DPoP"):
		l.dpop.used = true
	case strings.EqualFold(scheme, "Bearer") && !l.dpop.flagged && (l.dpop.required || l.dpop.used):
		l.dpop.flagged = true
		why := "the server's WWW-Authenticate challenge asks for DPoP only"
		if l.dpop.used {
			why = "this session sent its token with the DPoP scheme before: a DPoP-bound token MUST go with the DPoP scheme and a proof"
		}
		l.addHTTP(ev, RuleDPoPDowngrade, client.Out, "> Authorization: "+bounded(sent["authorization"], 64),
			"the access token is sent as a Bearer token, but "+why+" (later requests are not flagged again)")
	}
}

// authScheme reports whether a lower-cased WWW-Authenticate value has a
// challenge of scheme (at its start or after a comma).
func authScheme(v, scheme string) bool {
	for part := range strings.SplitSeq(v, ",") {
		if f := strings.Fields(part); len(f) > 0 && f[0] == scheme {
			return true
		}
	}
	return false
}
