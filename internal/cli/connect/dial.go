package connect

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/transport"
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
	}
	if t.ProtocolVersion != "" {
		opts.ProtocolVersion = t.ProtocolVersion
	}
	if opts.ServerRequests, err = f.answers.serverRequests(); err != nil {
		return client.Options{}, transport.StdioConfig{}, err
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
// authorization URL goes to prompt and the tokens the flow obtains to
// secrets.
func Dial(f *Flags, t *Target, cfg transport.StdioConfig, prompt func(authURL string), secrets *SecretSink) (d client.Dialer, name, what string, err error) {
	if t.URL == "" {
		if len(f.Headers) > 0 || f.BearerEnv != "" || f.Insecure || f.Reconnect {
			return nil, "", "", cmdutil.Usagef("--header, --bearer-token-env, --insecure and --reconnect need --url")
		}
		if f.OAuth {
			return nil, "", "", cmdutil.Usagef("--oauth needs --url")
		}
		return client.Stdio(cfg), "stdio", strings.Join(cfg.Argv, " "), nil
	}
	hc, err := httpConfig(f, t, prompt, secrets)
	if err != nil {
		return nil, "", "", err
	}
	return client.HTTP(hc), "http", t.URL, nil
}

// httpConfig turns the HTTP flags and the target into the transport's
// configuration.
func httpConfig(f *Flags, t *Target, prompt func(authURL string), secrets *SecretSink) (transport.HTTPConfig, error) {
	mode := transport.HTTPMode(t.Mode)
	switch mode {
	case transport.ModeAuto, transport.ModeStreamable, transport.ModeSSE:
	default:
		return transport.HTTPConfig{}, cmdutil.Usagef(fmt.Sprintf("--transport %q: want auto, streamable or sse", t.Mode))
	}
	h := http.Header{}
	for _, kv := range f.Headers {
		name, value, ok := strings.Cut(kv, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return transport.HTTPConfig{}, cmdutil.Usagef(fmt.Sprintf("--header %q: want 'Name: value'", redactArg(kv)))
		}
		h.Add(name, strings.TrimSpace(value))
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
	oauth, err := oauthConfig(f, prompt, secrets)
	if err != nil {
		return transport.HTTPConfig{}, err
	}
	return transport.HTTPConfig{
		URL: t.URL, Mode: mode, Header: h, Insecure: f.Insecure,
		MaxEventBytes: int(f.MaxLineBytes), ConnectTimeout: f.ConnTimeout, OAuth: oauth,
	}, nil
}

// oauthConfig turns the --oauth flags into the transport's OAuth
// configuration (nil without --oauth).
func oauthConfig(f *Flags, prompt func(authURL string), secrets *SecretSink) (*transport.OAuthConfig, error) {
	if !f.OAuth {
		if f.OAuthClientID != "" || f.OAuthSecretEnv != "" {
			return nil, cmdutil.Usagef("--oauth-client-id and --oauth-client-secret-env need --oauth")
		}
		return nil, nil
	}
	browser := transport.OAuthBrowser(f.OAuthBrowser)
	if browser != transport.BrowserPrint && browser != transport.BrowserFetch {
		return nil, cmdutil.Usagef(fmt.Sprintf("--oauth-browser %q: want print or fetch", f.OAuthBrowser))
	}
	if f.OAuthTimeout <= 0 {
		return nil, cmdutil.Usagef("--oauth-timeout must be positive")
	}
	cfg := &transport.OAuthConfig{ClientID: f.OAuthClientID, Browser: browser, Timeout: f.OAuthTimeout}
	if f.OAuthSecretEnv != "" {
		if f.OAuthClientID == "" {
			return nil, cmdutil.Usagef("--oauth-client-secret-env needs --oauth-client-id")
		}
		cfg.ClientSecret = strings.TrimSpace(os.Getenv(f.OAuthSecretEnv))
		if cfg.ClientSecret == "" {
			return nil, cmdutil.Usagef("--oauth-client-secret-env " + f.OAuthSecretEnv + ": the variable is unset or empty")
		}
	}
	cfg.OnSecret = secrets.add
	cfg.Prompt = prompt
	return cfg, nil
}

// PrintPrompt is the OAuth prompt of the headless commands: the
// authorization URL printed on w, with how long sonde waits for the
// redirect.
func PrintPrompt(w io.Writer, f *Flags) func(authURL string) {
	return func(authURL string) {
		fmt.Fprintf(w, "sonde: open this URL to authorize sonde (waiting up to %v for the redirect):\n%s\n", f.OAuthTimeout, authURL)
	}
}

// redactArg shows a header flag with its value hidden.
func redactArg(kv string) string {
	name, _, ok := strings.Cut(kv, ":")
	if !ok {
		return transport.Redacted
	}
	return name + ": " + transport.Redacted
}
