package connect

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/transport"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// ClientOptions turns the flags and the target into the client's options
// and the server's process configuration.
func ClientOptions(f *Flags, t *Target) (client.Options, transport.StdioConfig, error) {
	maxPending := max(f.MaxPending, t.MaxPending)
	if maxPending <= 0 {
		return client.Options{}, transport.StdioConfig{}, cmdutil.Usagef("--max-pending must be at least 1")
	}
	env, err := transport.BuildEnv(os.Environ(), f.PassEnv, t.Env)
	if err != nil {
		return client.Options{}, transport.StdioConfig{}, cmdutil.Usagef(err.Error())
	}
	era, err := client.ParseEra(f.Era)
	if err != nil {
		return client.Options{}, transport.StdioConfig{}, cmdutil.Usagef("--era: " + err.Error())
	}
	opts := client.Options{
		Timeout: f.Timeout, ResetOnProgress: f.ResetOnProgress, MaxTotalTimeout: f.MaxTotal,
		MaxPending: maxPending, MaxLineBytes: int(f.MaxLineBytes), Strict: f.Strict,
		ProtocolVersion: f.ProtocolVersion, ClientVersion: cmdutil.Version, Era: era,
		Flood: f.floodLimit(),
	}
	if t.ProtocolVersion != "" {
		opts.ProtocolVersion = t.ProtocolVersion
	}
	if opts.ServerRequests, err = f.answers.serverRequests(); err != nil {
		return client.Options{}, transport.StdioConfig{}, err
	}
	if t.ServerRequests != nil && !f.answers.given() {
		opts.ServerRequests = *t.ServerRequests
	}
	cfg := transport.StdioConfig{
		Argv: t.Argv, Dir: t.Cwd, Env: env, MaxLineBytes: int(f.MaxLineBytes),
		StderrBytes: int(f.StderrBytes), KillAfter: f.KillAfter, Hide: t.Hide,
	}
	return opts, cfg, nil
}

// Dial returns how to reach the server: the process cfg (from
// ClientOptions) as a subprocess, or the target's URL over HTTP. name is the
// transport's name and what the server is, for display. With --oauth, the
// authorization URL and the grant go to hooks, and the secrets the flow
// obtains or makes to secrets.
func Dial(f *Flags, t *Target, cfg transport.StdioConfig, hooks OAuthHooks, secrets *SecretSink) (d client.Dialer, name, what string, err error) {
	if t.URL == "" {
		if len(f.Headers) > 0 || f.BearerEnv != "" || f.Insecure || f.Reconnect {
			return nil, "", "", cmdutil.Usagef("--header, --bearer-token-env, --insecure and --reconnect need --url")
		}
		if f.OAuth {
			return nil, "", "", cmdutil.Usagef("--oauth needs --url")
		}
		return client.Stdio(cfg), "stdio", strings.Join(cfg.Argv, " "), nil
	}
	hc, err := httpConfig(f, t, hooks, secrets)
	if err != nil {
		return nil, "", "", err
	}
	return client.HTTP(hc), "http", t.URL, nil
}

// httpConfig turns the HTTP flags and the target into the transport's
// configuration.
func httpConfig(f *Flags, t *Target, hooks OAuthHooks, secrets *SecretSink) (transport.HTTPConfig, error) {
	mode := transport.HTTPMode(t.Mode)
	switch mode {
	case transport.ModeAuto, transport.ModeStreamable, transport.ModeSSE:
	default:
		return transport.HTTPConfig{}, cmdutil.Usagef(fmt.Sprintf("--transport %q: want auto, streamable or sse", t.Mode))
	}
	h := http.Header{}
	for _, kv := range f.Headers {
		name, value, err := parseHeaderFlag(kv)
		if err != nil {
			return transport.HTTPConfig{}, err
		}
		h.Add(name, value)
	}
	// Headers of a config entry (--server), unless --header sets the same.
	for name, values := range t.Header {
		if h.Values(name) == nil {
			h[name] = values
		}
	}
	if f.BearerEnv != "" {
		tok := strings.TrimSpace(os.Getenv(f.BearerEnv))
		if tok == "" {
			return transport.HTTPConfig{}, cmdutil.Usagef("--bearer-token-env " + f.BearerEnv + ": the variable is unset or empty")
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	oauth, err := oauthConfig(f, hooks, secrets)
	if err != nil {
		return transport.HTTPConfig{}, err
	}
	return transport.HTTPConfig{
		URL: t.URL, Mode: mode, Header: h, Insecure: f.Insecure,
		MaxEventBytes: int(f.MaxLineBytes), ConnectTimeout: f.ConnTimeout, OAuth: oauth,
	}, nil
}

// OAuthHooks are how the OAuth flow (--oauth) reaches the user: Prompt
// shows the authorization URL of the code grant; Grant, if set, is told at
// each authorization which grant runs and why (before Prompt).
type OAuthHooks struct {
	Prompt func(authURL string)
	Grant  func(grant string)
}

// oauthConfig turns the --oauth flags into the transport's OAuth
// configuration (nil without --oauth).
func oauthConfig(f *Flags, hooks OAuthHooks, secrets *SecretSink) (*oauth.Config, error) {
	if !f.OAuth {
		if f.OAuthClientID != "" || f.OAuthSecretEnv != "" || f.OAuthSecretFile != "" || f.OAuthPrivateKey != "" ||
			(f.OAuthDPoP != "" && f.OAuthDPoP != string(oauth.DPoPAuto)) || f.OAuthIDTokenEnv != "" || f.OAuthIDTokenFile != "" ||
			f.OAuthIdPTokenEndpoint != "" || f.OAuthIdPClientID != "" || f.OAuthIdPSecretEnv != "" ||
			(f.OAuthGrant != "" && f.OAuthGrant != string(oauth.GrantAuthorizationCode)) ||
			(f.OAuthAssertionAud != "" && f.OAuthAssertionAud != string(oauth.AudienceIssuer)) {
			return nil, cmdutil.Usagef("--oauth-client-id, --oauth-client-secret-env, --oauth-client-secret-file, --oauth-dpop, --oauth-grant, --oauth-private-key, --oauth-assertion-audience, --oauth-id-token-env, --oauth-id-token-file and --oauth-idp-* need --oauth")
		}
		return nil, nil
	}
	browser := oauth.Browser(f.OAuthBrowser)
	if browser != oauth.BrowserPrint && browser != oauth.BrowserFetch {
		return nil, cmdutil.Usagef(fmt.Sprintf("--oauth-browser %q: want print or fetch", f.OAuthBrowser))
	}
	if f.OAuthTimeout <= 0 {
		return nil, cmdutil.Usagef("--oauth-timeout must be positive")
	}
	grant := oauth.Grant(f.OAuthGrant)
	switch grant {
	case "":
		grant = oauth.GrantAuthorizationCode
	case oauth.GrantAuthorizationCode, oauth.GrantClientCredentials, oauth.GrantCrossAppAccess:
	default:
		return nil, cmdutil.Usagef(fmt.Sprintf("--oauth-grant %q: want authorization-code, client-credentials or cross-app-access", f.OAuthGrant))
	}
	cfg := &oauth.Config{ClientID: f.OAuthClientID, Browser: browser, Timeout: f.OAuthTimeout, Grant: grant, DPoP: oauth.DPoPMode(f.OAuthDPoP)}
	if !slices.Contains(oauth.DPoPModes, cfg.DPoP) && cfg.DPoP != "" {
		return nil, cmdutil.Usagef(fmt.Sprintf("--oauth-dpop %q: want auto, always or never", f.OAuthDPoP))
	}
	if strings.HasPrefix(strings.ToLower(f.OAuthClientID), "https://") {
		if err := oauth.CheckClientMetadataURL(f.OAuthClientID); err != nil {
			return nil, cmdutil.Usagef("--oauth-client-id " + f.OAuthClientID + ": " + err.Error())
		}
	}
	if err := clientSecret(f, cfg, secrets); err != nil {
		return nil, err
	}
	switch aud := oauth.Audience(f.OAuthAssertionAud); aud {
	case "", oauth.AudienceIssuer, oauth.AudienceTokenEndpoint:
		if aud != "" && aud != oauth.AudienceIssuer && f.OAuthPrivateKey == "" {
			return nil, cmdutil.Usagef("--oauth-assertion-audience needs --oauth-private-key")
		}
		cfg.AssertionAudience = aud
	default:
		return nil, cmdutil.Usagef(fmt.Sprintf("--oauth-assertion-audience %q: want issuer or token-endpoint", f.OAuthAssertionAud))
	}
	crossApp := f.OAuthIDTokenEnv != "" || f.OAuthIDTokenFile != "" || f.OAuthIdPTokenEndpoint != "" || f.OAuthIdPClientID != "" || f.OAuthIdPSecretEnv != ""
	if crossApp && grant != oauth.GrantCrossAppAccess {
		return nil, cmdutil.Usagef("--oauth-id-token-env, --oauth-id-token-file and --oauth-idp-* need --oauth-grant cross-app-access")
	}
	if grant != oauth.GrantAuthorizationCode {
		if f.OAuthClientID == "" || cfg.ClientSecret == "" && cfg.PrivateKey == nil {
			return nil, cmdutil.Usagef("--oauth-grant " + string(grant) + " needs a registered client: --oauth-client-id with --oauth-client-secret-env, --oauth-client-secret-file or --oauth-private-key")
		}
	}
	if grant == oauth.GrantCrossAppAccess {
		if err := crossAppConfig(f, cfg, secrets); err != nil {
			return nil, err
		}
	}
	cfg.OnSecret = secrets.add
	cfg.Prompt = hooks.Prompt
	cfg.OnGrant = hooks.Grant
	return cfg, nil
}

// clientSecret is the registered client's credential of the --oauth flags
// (--oauth-client-secret-env or --oauth-private-key) into cfg.
func clientSecret(f *Flags, cfg *oauth.Config, secrets *SecretSink) error {
	if f.OAuthSecretFile != "" {
		switch {
		case f.OAuthClientID == "":
			return cmdutil.Usagef("--oauth-client-secret-file needs --oauth-client-id")
		case f.OAuthSecretEnv != "":
			return cmdutil.Usagef("--oauth-client-secret-file and --oauth-client-secret-env exclude each other")
		}
		b, err := os.ReadFile(f.OAuthSecretFile)
		if err != nil {
			return cmdutil.Usagef("--oauth-client-secret-file: " + err.Error())
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if cfg.ClientSecret = strings.TrimSpace(line); cfg.ClientSecret == "" {
			return cmdutil.Usagef("--oauth-client-secret-file " + f.OAuthSecretFile + ": the file's first line is empty")
		}
		secrets.add(cfg.ClientSecret)
	}
	if f.OAuthSecretEnv != "" {
		if f.OAuthClientID == "" {
			return cmdutil.Usagef("--oauth-client-secret-env needs --oauth-client-id")
		}
		cfg.ClientSecret = strings.TrimSpace(os.Getenv(f.OAuthSecretEnv))
		if cfg.ClientSecret == "" {
			return cmdutil.Usagef("--oauth-client-secret-env " + f.OAuthSecretEnv + ": the variable is unset or empty")
		}
		secrets.add(cfg.ClientSecret)
	}
	if f.OAuthPrivateKey != "" {
		switch {
		case f.OAuthClientID == "":
			return cmdutil.Usagef("--oauth-private-key needs --oauth-client-id")
		case f.OAuthSecretEnv != "" || f.OAuthSecretFile != "":
			return cmdutil.Usagef("--oauth-private-key and --oauth-client-secret-env/-file exclude each other: private_key_jwt or a client secret")
		}
		pemBytes, err := os.ReadFile(f.OAuthPrivateKey)
		if err != nil {
			return cmdutil.Usagef("--oauth-private-key: " + err.Error())
		}
		if cfg.PrivateKey, err = oauth.ParsePrivateKey(pemBytes); err != nil {
			return cmdutil.Usagef("--oauth-private-key " + f.OAuthPrivateKey + ": " + err.Error())
		}
	}
	return nil
}

// crossAppConfig reads what --oauth-grant cross-app-access needs: the
// identity assertion (from a variable or a file) and the identity
// provider's token endpoint and client.
func crossAppConfig(f *Flags, cfg *oauth.Config, secrets *SecretSink) error {
	switch {
	case f.OAuthIDTokenEnv != "" && f.OAuthIDTokenFile != "":
		return cmdutil.Usagef("--oauth-id-token-env and --oauth-id-token-file exclude each other")
	case f.OAuthIDTokenEnv != "":
		cfg.IDAssertion = strings.TrimSpace(os.Getenv(f.OAuthIDTokenEnv))
		if cfg.IDAssertion == "" {
			return cmdutil.Usagef("--oauth-id-token-env " + f.OAuthIDTokenEnv + ": the variable is unset or empty")
		}
	case f.OAuthIDTokenFile != "":
		b, err := os.ReadFile(f.OAuthIDTokenFile)
		if err != nil {
			return cmdutil.Usagef("--oauth-id-token-file: " + err.Error())
		}
		if cfg.IDAssertion = strings.TrimSpace(string(b)); cfg.IDAssertion == "" {
			return cmdutil.Usagef("--oauth-id-token-file " + f.OAuthIDTokenFile + ": the file is empty")
		}
	default:
		return cmdutil.Usagef("--oauth-grant cross-app-access needs the identity assertion: --oauth-id-token-env NAME or --oauth-id-token-file FILE")
	}
	secrets.add(cfg.IDAssertion)
	if f.OAuthIdPTokenEndpoint == "" {
		return cmdutil.Usagef("--oauth-grant cross-app-access needs --oauth-idp-token-endpoint URL")
	}
	cfg.IdPTokenEndpoint, cfg.IdPClientID = f.OAuthIdPTokenEndpoint, f.OAuthIdPClientID
	if f.OAuthIdPSecretEnv != "" {
		if f.OAuthIdPClientID == "" {
			return cmdutil.Usagef("--oauth-idp-client-secret-env needs --oauth-idp-client-id")
		}
		cfg.IdPClientSecret = strings.TrimSpace(os.Getenv(f.OAuthIdPSecretEnv))
		if cfg.IdPClientSecret == "" {
			return cmdutil.Usagef("--oauth-idp-client-secret-env " + f.OAuthIdPSecretEnv + ": the variable is unset or empty")
		}
		secrets.add(cfg.IdPClientSecret)
	}
	return nil
}

// PrintPrompt is the OAuth prompt of the headless commands: the
// authorization URL printed on w, with how long sonde waits for the
// redirect.
func PrintPrompt(w io.Writer, f *Flags) func(authURL string) {
	return func(authURL string) {
		fmt.Fprintf(w, "sonde: open this URL to authorize sonde (waiting up to %v for the redirect):\n%s\n", f.OAuthTimeout, authURL)
	}
}

// parseHeaderFlag reads one --header 'Name: value': the name an HTTP
// token, the value trimmed and without a control character but tab (CR or
// LF would smuggle a header of its own; Go refuses to send the others).
// The error is a usage error that never shows the value.
func parseHeaderFlag(kv string) (name, value string, err error) {
	name, value, ok := strings.Cut(kv, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || name == "":
		return "", "", cmdutil.Usagef(fmt.Sprintf("--header %q: want 'Name: value'", redactArg(kv)))
	case !headerToken(name):
		return "", "", cmdutil.Usagef(fmt.Sprintf("--header %q: the name is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", redactArg(kv)))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return "", "", cmdutil.Usagef(fmt.Sprintf("--header %q: the value holds a control character (CR, LF, NUL…)", redactArg(kv)))
		}
	}
	return name, value, nil
}

// headerToken reports whether s is an HTTP token (RFC 9110, 5.6.2).
func headerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// redactArg shows a header flag with its value hidden.
func redactArg(kv string) string {
	name, _, ok := strings.Cut(kv, ":")
	if !ok {
		return transport.Redacted
	}
	return name + ": " + transport.Redacted
}
