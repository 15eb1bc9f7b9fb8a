package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/transport/internal/httpshow"
)

// register fills g's client for the code grant. With an authorization
// server that supports Client ID Metadata Documents, the client id is a
// URL: Config.ClientID when it is one, else (when the server offers no
// dynamic registration, which needs nothing published)
// DefaultClientMetadataURL.
// Otherwise Config.ClientID (and ClientSecret or PrivateKey) when it is
// given and no URL, else a client registered at the registration endpoint
// (RFC 7591) of g's authorization server for g's redirect URI; a URL
// client id with neither is used as given. g.why says which and why.
func (f *flow) register(g *grant) error {
	cfg, as := f.a.cfg, g.as
	g.clientID, g.secret, g.method = cfg.ClientID, cfg.ClientSecret, ""
	if cfg.PrivateKey != nil {
		g.method = "private_key_jwt"
	}
	metadataURL := cfg.ClientID == "" || ClientMetadataURL(cfg.ClientID)
	switch {
	case metadataURL && as.ClientIDMetadataDocument && cfg.ClientID == "" && as.RegistrationEndpoint == "":
		g.clientID = DefaultClientMetadataURL
		g.why = "client id " + g.clientID + ": sonde's client metadata document, since the authorization server supports client ID metadata documents and offers no dynamic registration (--oauth-client-id names another)"
		return nil
	case metadataURL && as.ClientIDMetadataDocument:
		g.why = "client id " + g.clientID + " (--oauth-client-id): a client metadata document, which the authorization server supports"
		return nil
	case !metadataURL:
		g.why = "client id " + g.clientID + " (--oauth-client-id)" + g.authDescription()
		return nil
	case cfg.ClientID != "" && as.RegistrationEndpoint == "":
		g.why = "client id " + g.clientID + " (--oauth-client-id) used as given: the authorization server does not say it supports client ID metadata documents, and offers no dynamic registration"
		return nil
	}
	if as.RegistrationEndpoint == "" {
		return &Error{Step: "registration", Msg: "the authorization server offers no dynamic registration (no registration_endpoint): register a client there and pass --oauth-client-id"}
	}
	g.secret, g.method = "", ""
	g.why = "a client registered dynamically at " + as.RegistrationEndpoint + ", since the authorization server does not support client ID metadata documents"
	if as.ClientIDMetadataDocument {
		g.why = "a client registered dynamically at " + as.RegistrationEndpoint + " (the authorization server also supports client ID metadata documents: --oauth-client-id URL uses one)"
	}
	if cfg.ClientID != "" {
		g.why = "a client registered dynamically at " + as.RegistrationEndpoint + ": --oauth-client-id names a client metadata document, which the authorization server does not support"
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
	f.secret(out.ClientSecret)
	g.secret, g.method = out.ClientSecret, out.Method
	if out.ClientID == "" {
		return &Error{Step: "registration", Msg: "the registration response has no client_id"}
	}
	g.clientID = out.ClientID
	g.why += g.authDescription()
	return nil
}

// ClientMetadataURL reports whether a client id is a URL naming a client
// metadata document: an https URL with a path (Client ID Metadata
// Documents, MCP 2025-11-25).
func ClientMetadataURL(clientID string) bool {
	u, err := url.Parse(clientID)
	return err == nil && strings.EqualFold(u.Scheme, "https") && u.Host != "" && u.Path != "" && u.Path != "/"
}

// CheckClientMetadataURL says what makes a URL client id unusable as the
// URL of a client metadata document (nil when nothing): it must be https,
// with a host and a path, no user or password, no fragment, no "." or
// ".." path segment.
func CheckClientMetadataURL(clientID string) error {
	u, err := url.Parse(clientID)
	switch {
	case err != nil:
		return err
	case !strings.EqualFold(u.Scheme, "https") || u.Host == "":
		return errors.New("a client metadata document's URL must be an absolute https URL")
	case u.Path == "" || u.Path == "/":
		return errors.New("a client metadata document's URL must have a path")
	case u.User != nil:
		return errors.New("a client metadata document's URL must not hold a user or password")
	case u.Fragment != "" || strings.Contains(clientID, "#"):
		return errors.New("a client metadata document's URL must not have a fragment")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return errors.New(`a client metadata document's URL must not have "." or ".." path segments`)
		}
	}
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
