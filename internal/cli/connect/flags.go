// Package connect turns the flags of a command that talks to a server into
// a connected session: Flags hold the flag values as parsed (nobody writes
// them afterwards); Resolve (a command after --, --url, or a host config
// entry with --server) produces a Target; Open starts or dials the server,
// with what runs beside the client (the --record capture, the --trace
// printer, the secrets the run learns), runs the handshake and returns the
// Session; Run is Open, the command's work and Close.
package connect

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// Flags are the flags of every command that talks to a server, as parsed.
type Flags struct {
	Timeout         time.Duration
	ResetOnProgress bool
	MaxTotal        time.Duration
	// Linger is how long Close waits for the late answers of requests
	// that timed out (--linger).
	Linger          time.Duration
	MaxPending      int
	MaxLineBytes    ByteSize
	StderrBytes     ByteSize
	KillAfter       time.Duration
	Env             []string
	PassEnv         []string
	Cwd             string
	Strict          bool
	ProtocolVersion string
	Era             string
	JSON            bool
	Trace           bool
	Record          string
	Redact          []string
	// The notification flood limit (--flood-limit, --flood-bytes).
	FloodLimit int
	FloodBytes ByteSize

	// How the server's requests are answered (answers.go).
	answers answerFlags

	// HTTP (--url instead of a command).
	URL         string
	Mode        string
	Headers     []string
	BearerEnv   string
	Insecure    bool
	Reconnect   bool
	ConnTimeout time.Duration

	// OAuth (--oauth): the flow runs in the transport on a 401.
	OAuth          bool
	OAuthClientID  string
	OAuthSecretEnv string
	OAuthBrowser   string
	OAuthTimeout   time.Duration
	// The grant (--oauth-grant) and what the grants other than the
	// default need: a private key for private_key_jwt, the identity
	// assertion and the identity provider of cross-app access.
	OAuthGrant            string
	OAuthPrivateKey       string
	OAuthAssertionAud     string
	OAuthIDTokenEnv       string
	OAuthIDTokenFile      string
	OAuthIdPTokenEndpoint string
	OAuthIdPClientID      string
	OAuthIdPSecretEnv     string
	// OAuthSecretFile is --oauth-client-secret-file; OAuthDPoP is
	// --oauth-dpop (auto, always, never).
	OAuthSecretFile string
	OAuthDPoP       string

	// OpenTelemetry (--otlp-*, --traceparent; otlp.go).
	OTLP OTLPFlags

	// A server of a host config file (--config, --server, --input).
	// Server is the first --server; Servers every one given (tools and
	// call take several, fleet.go).
	Config  string
	Server  string
	Servers []string
	Inputs  []string
}

// Register adds the server flags to fs, with their defaults.
func (f *Flags) Register(fs *pflag.FlagSet) {
	f.MaxLineBytes = transport.DefaultMaxLineBytes
	f.StderrBytes = transport.DefaultStderrBytes
	fs.DurationVar(&f.Timeout, "timeout", client.DefaultTimeout, "deadline of each request")
	fs.BoolVar(&f.ResetOnProgress, "timeout-reset-on-progress", false, "restart a request's deadline when the server reports progress for it")
	fs.DurationVar(&f.MaxTotal, "max-total-timeout", 0, "with --timeout-reset-on-progress, the longest a request may live (default 10 x --timeout)")
	fs.DurationVar(&f.Linger, "linger", 0, "before exiting, wait up to this long for the late answers of requests that timed out (each is reported on stderr with the --timeout that would have been enough)")
	fs.IntVar(&f.MaxPending, "max-pending", client.DefaultMaxPending, "requests in flight at most; past it a request fails with MCP_BUSY")
	fs.Var(&f.MaxLineBytes, "max-line-bytes", "longest line accepted from the server's stdout (e.g. 8MiB); longer is MCP_PROTOCOL")
	fs.Var(&f.StderrBytes, "stderr-bytes", "bytes of the server's stderr tail kept (e.g. 64KiB)")
	fs.DurationVar(&f.KillAfter, "kill-after", transport.DefaultKillAfter, "grace period on close: after closing stdin, and again after SIGTERM (CTRL_BREAK_EVENT on Windows)")
	fs.StringArrayVar(&f.Env, "env", nil, "set KEY=VALUE in the server's environment (repeatable)")
	fs.StringArrayVar(&f.PassEnv, "pass-env", nil, "pass variable NAME from sonde's environment to the server (repeatable)")
	fs.StringVar(&f.Cwd, "cwd", "", "working directory of the server (default: sonde's)")
	fs.BoolVar(&f.Strict, "strict", false, "treat a malformed line on stdout as corruption: fail everything pending and close the server")
	fs.StringVar(&f.ProtocolVersion, "protocol-version", "2025-11-25", "protocol version asked for in initialize")
	fs.StringVar(&f.Era, "era", string(client.EraLegacy), "protocol `ERA`: legacy (initialize), modern (2026-07-28: server/discover, version and capabilities in every request's _meta, input_required retries) or auto (server/discover, falling back to initialize on any error or timeout)")
	fs.BoolVar(&f.JSON, "json", false, "machine-readable output")
	fs.BoolVar(&f.Trace, "trace", false, "print every frame, lifecycle event and stderr chunk on stderr as it happens")
	fs.StringVar(&f.Record, "record", "", "write the session to FILE as it happens, mode 0600 (a capture: docs/capture-format.md); FILE must not exist")
	fs.StringArrayVar(&f.Redact, "redact", nil, "in captures, replace what matches REGEX with «redacted» (repeatable); --env, --pass-env and --header values always are, and so are a --server entry's header values and what its references bring in (${env:…}, ${input:…}) and the secrets of --oauth (tokens, client secrets, assertions)")
	fs.StringVar(&f.URL, "url", "", "connect to the MCP server at `URL` over HTTP instead of starting a command")
	fs.StringVar(&f.Mode, "transport", string(transport.ModeAuto), "with --url: auto, streamable (Streamable HTTP) or sse (legacy HTTP+SSE); auto tries Streamable HTTP and falls back to SSE")
	fs.StringArrayVar(&f.Headers, "header", nil, "with --url: send header 'Name: value' on every request (repeatable; values are never shown or recorded)")
	fs.StringVar(&f.BearerEnv, "bearer-token-env", "", "with --url: send 'Authorization: Bearer <token>' with the token read from environment variable `NAME`")
	fs.BoolVar(&f.Insecure, "insecure", false, "with --url: do not verify the server's TLS certificate (dangerous)")
	fs.BoolVar(&f.OAuth, "oauth", false, "with --url: on a 401 (or a 403 insufficient_scope: step-up), run the OAuth 2.1 authorization code flow with PKCE (discovery, a client ID metadata document where the authorization server supports them or else dynamic registration, unless --oauth-client-id; a loopback redirect on 127.0.0.1) or the grant --oauth-grant names and send the access token on every request; the authorization URL is printed on stderr (in the UI, in a dialog); sonde never opens a browser")
	fs.StringVar(&f.OAuthClientID, "oauth-client-id", "", "with --oauth: use this registered client `ID` instead of dynamic client registration; an https URL is a client ID metadata document, used where the authorization server supports them (by default sonde uses "+oauth.DefaultClientMetadataURL+" there)")
	fs.StringVar(&f.OAuthSecretEnv, "oauth-client-secret-env", "", "with --oauth-client-id: read the client secret from environment variable `NAME` (never shown); client_secret_basic or client_secret_post, as the metadata says")
	fs.StringVar(&f.OAuthSecretFile, "oauth-client-secret-file", "", "with --oauth-client-id: read the client secret from `FILE` (its first line; never shown); excludes --oauth-client-secret-env")
	fs.StringVar(&f.OAuthDPoP, "oauth-dpop", string(oauth.DPoPAuto), "with --oauth: bind tokens to an ephemeral key with DPoP proofs (RFC 9449), `MODE`: auto (when the authorization server lists ES256 in dpop_signing_alg_values_supported), always (refuse a server that does not) or never (Bearer tokens)")
	fs.StringVar(&f.OAuthGrant, "oauth-grant", string(oauth.GrantAuthorizationCode), "with --oauth: how sonde gets its token, `GRANT`: authorization-code (a user signs in), client-credentials (a machine client: --oauth-client-id with --oauth-client-secret-env or --oauth-private-key) or cross-app-access (an identity assertion exchanged at --oauth-idp-token-endpoint for an ID-JAG, then the JWT bearer grant)")
	fs.StringVar(&f.OAuthPrivateKey, "oauth-private-key", "", "with --oauth-client-id: authenticate with private_key_jwt, signing each client assertion with the PEM private key in `FILE` (EC P-256/P-384/P-521, RSA of 2048 bits or more, Ed25519; never shown)")
	fs.StringVar(&f.OAuthAssertionAud, "oauth-assertion-audience", string(oauth.AudienceIssuer), "with --oauth-private-key: the aud of each client assertion, `AUD`: issuer (the authorization server's issuer identifier) or token-endpoint (its token endpoint URL, for servers that want it)")
	fs.StringVar(&f.OAuthIDTokenEnv, "oauth-id-token-env", "", "with --oauth-grant cross-app-access: read the identity assertion (an ID token, or a SAML assertion) from environment variable `NAME` (never shown)")
	fs.StringVar(&f.OAuthIDTokenFile, "oauth-id-token-file", "", "with --oauth-grant cross-app-access: read the identity assertion from `FILE` (never shown)")
	fs.StringVar(&f.OAuthIdPTokenEndpoint, "oauth-idp-token-endpoint", "", "with --oauth-grant cross-app-access: the identity provider's token endpoint `URL`, where the identity assertion is exchanged for an ID-JAG (RFC 8693)")
	fs.StringVar(&f.OAuthIdPClientID, "oauth-idp-client-id", "", "with --oauth-grant cross-app-access: sonde's client `ID` at the identity provider")
	fs.StringVar(&f.OAuthIdPSecretEnv, "oauth-idp-client-secret-env", "", "with --oauth-idp-client-id: read sonde's client secret at the identity provider from environment variable `NAME` (never shown)")
	fs.StringVar(&f.OAuthBrowser, "oauth-browser", string(oauth.BrowserPrint), "with --oauth: print (print the authorization URL and wait for the redirect) or fetch (GET the URL and follow its redirects: for authorization servers without a login page, in tests and automation)")
	fs.DurationVar(&f.OAuthTimeout, "oauth-timeout", oauth.DefaultTimeout, "with --oauth: how long one authorization may take, the visit to the authorization URL included")
	fs.BoolVar(&f.Reconnect, "reconnect", false, "with --url: when the server ends the session (MCP_SESSION_EXPIRED), initialize a new one and retry once")
	f.answers.register(fs)
	fs.DurationVar(&f.ConnTimeout, "connect-timeout", transport.DefaultConnectTimeout, "with --url: how long the legacy SSE endpoint event, and the DELETE that ends a session, may take")
	f.registerConfig(fs)
	f.registerFlood(fs)
	f.OTLP.Register(fs)
}

// ByteSize is a flag value in bytes that accepts KiB/MiB/GiB (and KB/MB/GB
// as the same binary units) suffixes.
type ByteSize int

// String is the size with its largest exact binary unit (8MiB).
func (b *ByteSize) String() string { return formatBytes(int64(*b)) }

// Type names the flag's kind of value in the help.
func (b *ByteSize) Type() string { return "bytes" }

// Set parses a size: a number of bytes, optionally with a unit.
func (b *ByteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return fmt.Errorf("%q is not a positive size (e.g. 65536, 64KiB, 8MiB)", s)
	}
	*b = ByteSize(n * mult)
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}
