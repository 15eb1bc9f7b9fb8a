package oauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// register fills g's client: Config.ClientID (and ClientSecret) when
// given, else a client registered at the registration endpoint (RFC 7591)
// of g's authorization server for g's redirect URI.
func (f *flow) register(g *grant) error {
	cfg, as := f.a.cfg, g.as
	g.clientID, g.secret, g.method = cfg.ClientID, cfg.ClientSecret, ""
	if g.clientID != "" {
		return nil
	}
	if as.RegistrationEndpoint == "" {
		return &Error{Step: "registration", Msg: "the authorization server offers no dynamic registration (no registration_endpoint): register a client there and pass --oauth-client-id"}
	}
	if why := insecureEndpoint(as.RegistrationEndpoint); why != "" {
		return &Error{Step: "registration", Msg: fmt.Sprintf("the authorization server's registration_endpoint %s %s: refusing to proceed", as.RegistrationEndpoint, why)}
	}
	body, _ := json.Marshal(map[string]any{
		"redirect_uris": []string{g.redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
		"response_types": []string{"code"}, "token_endpoint_auth_method": registrationMethod(as), "client_name": "sonde",
	})
	req, err := http.NewRequestWithContext(f.ctx, http.MethodPost, as.RegistrationEndpoint, strings.NewReader(string(body)))
	if err != nil {
		return &Error{Step: "registration", Msg: err.Error(), Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := f.postJSON(req, "registration", &out); err != nil {
		return err
	}
	cfg.secret(out.ClientSecret)
	g.secret, g.method = out.ClientSecret, out.Method
	if out.ClientID == "" {
		return &Error{Step: "registration", Msg: "the registration response has no client_id"}
	}
	g.clientID = out.ClientID
	return nil
}

// registrationMethod is the token endpoint auth method to register with: a
// public client ("none") unless the server takes only secrets.
func registrationMethod(as *ServerMetadata) string {
	methods := as.TokenAuthMethods
	if len(methods) == 0 || slices.Contains(methods, "none") {
		return "none"
	}
	if !slices.Contains(methods, "client_secret_basic") && slices.Contains(methods, "client_secret_post") {
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// postJSON sends req, reports it as an event (bodies are not shown: they
// hold secrets), and decodes a 2xx JSON answer into v.
func (f *flow) postJSON(req *http.Request, step string, v any) error {
	shown := req.URL.Redacted()
	ev := Event{Method: req.Method, URL: shown, Stream: StreamFlow, Header: []string{"> Content-Type: " + req.Header.Get("Content-Type")}}
	start := time.Now()
	resp, err := f.a.post.Do(req)
	ev.Duration = time.Since(start)
	if err != nil {
		ev.Note = step + ": " + httpshow.URLError(err).Error()
		f.a.note(ev)
		return &Error{Step: step, Msg: fmt.Sprintf("%s %s: %v", req.Method, shown, httpshow.URLError(err)), Err: err}
	}
	defer resp.Body.Close()
	ev.Status = resp.StatusCode
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes))
	if err != nil {
		ev.Note = step + ": reading the body: " + err.Error()
		f.a.note(ev)
		return &Error{Step: step, Msg: ev.Note, Err: err}
	}
	if resp.StatusCode/100 != 2 {
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		msg := fmt.Sprintf("%s %s: HTTP %d", req.Method, shown, resp.StatusCode) + notFollowed(resp)
		if json.Unmarshal(body, &oe) == nil && oe.Error != "" {
			msg += errorParams(oe.Error, oe.Description)
		}
		ev.Note = step + ": " + msg
		f.a.note(ev)
		return &Error{Step: step, Msg: msg}
	}
	if err := json.Unmarshal(body, v); err != nil {
		ev.Note = step + ": the answer is not the JSON expected"
		f.a.note(ev)
		return &Error{Step: step, Msg: fmt.Sprintf("%s %s: the answer is not the JSON expected: %v", req.Method, shown, err), Err: err}
	}
	ev.Note = step + ": ok"
	f.a.note(ev)
	return nil
}

// notFollowed says, for a redirect, where it pointed (resolved, without a
// password, cut to 200 bytes): ", a redirect to URL, not followed"; "" for
// another answer.
func notFollowed(resp *http.Response) string {
	if resp.StatusCode/100 != 3 {
		return ""
	}
	loc := resp.Header.Get("Location")
	if resp.Request != nil && resp.Request.URL != nil && loc != "" {
		if u, err := resp.Request.URL.Parse(loc); err == nil {
			loc = u.Redacted()
		}
	}
	if len(loc) > 200 {
		loc = strings.ToValidUTF8(loc[:200], "") + "…"
	}
	return fmt.Sprintf(", a redirect to %q, not followed", loc)
}

// errorParams shows an OAuth error answer's error and error_description:
// ": error (description)".
func errorParams(code, description string) string {
	s := ": " + code
	if description != "" {
		s += " (" + description + ")"
	}
	return s
}
