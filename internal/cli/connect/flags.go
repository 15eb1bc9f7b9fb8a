package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

const exitCodesHelp = `Exit status:
  0    ok
  1    a tool result with isError, a failed line in script, replay --against differences,
       or lint found violations
  2    usage error, or a capture file that cannot be read
  3    MCP_ERROR         the server answered with a JSON-RPC error
  4    MCP_TIMEOUT       no answer before the deadline
  5    MCP_PROCESS_EXIT  the server exited (or CLIENT_CLOSED)
  6    MCP_PROTOCOL      the server broke the protocol
  7    MCP_SPAWN         the server could not be started
  8    MCP_HANDSHAKE     initialize failed or the protocol version is unsupported
  9    MCP_BUSY          too many requests in flight (--max-pending)
  10   MCP_HTTP          an HTTP exchange failed (status, network, dropped stream); after a
       401 the message also says what authorization discovery found (the resource, its
       authorization server, S256, registration, scopes) and what went wrong on the way
  11   MCP_SESSION_EXPIRED  the server ended the HTTP session (404)
  12   MCP_URL_REQUIRED  the server needs the user to open a URL first (-32042); the URLs
       are printed on stderr
  130  interrupted
Errors are printed on stderr as one line: sonde: CODE: message (see docs/errors.md).`

func newRootCmd(io streams) *cobra.Command {
	var tf tuiFlags
	root := &cobra.Command{
		Use:   "sonde [flags] (-- COMMAND [ARG...] | --url URL | [--config FILE] --server NAME)",
		Short: "Inspect and debug MCP servers from the terminal",
		Long: `sonde launches an MCP server (a stdio subprocess) or connects to one over HTTP
(Streamable HTTP or legacy HTTP+SSE, --url), and shows, live, what the client knows:
every request in flight by id, the raw frames in both directions exactly as on the wire,
the server's stderr, and a tool picker to make calls.

  sonde -- npx -y @modelcontextprotocol/server-everything    the interactive UI
  sonde --url http://127.0.0.1:3001/mcp                       the same over HTTP
  sonde --server NAME                                         a server of Claude Desktop,
                                                              Claude Code, Cursor, VS Code,
                                                              Windsurf or Cline (--config FILE)
  sonde                                                       in a terminal: pick one of those
  sonde demo                                                  the out-of-order lesson

The server command comes after "--" and is run directly (no shell). Without one (and
without --url or --server), sonde shows a picker over the servers of the hosts' config
files when stdin is a terminal, and this help otherwise; sonde config list shows what it
found. The subcommands below do the same work headless, for scripts:
  sonde tools -- ./my-server --flag
  sonde call echo --args '{"value":"hi"}' -- ./my-server

` + exitCodesHelp,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return usagef(fmt.Sprintf("unknown command %q (see sonde --help); a server command goes after --", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if tf.server != "" || tf.config != "" || (len(args) == 0 && tf.url == "") {
				return runRootFromConfig(cmd, io, &tf, args)
			}
			if tf.url != "" && len(args) > 0 {
				return usagef("give either --url or a server command after --, not both")
			}
			if err := tf.checkInputFlag(); err != nil {
				return err
			}
			return runTUI(cmd.Context(), io, &tf, args, nil)
		},
	}
	tf.register(root)
	root.SetVersionTemplate("sonde {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usagef(err.Error() + " (see sonde " + cmd.Name() + " --help)")
	})
	root.AddCommand(
		newCallCmd(io), newToolsCmd(io), newCheckCmd(io), newScriptCmd(io), newBenchCmd(io),
		newFixtureCmd(io), newDemoCmd(io), newVersionCmd(io), newConfigCmd(io), newReplayCmd(io),
		newLintCmd(io), newStatsCmd(io), newExportCmd(io),
	)
	completeServerNames(root)
	root.AddCommand(featureCommands(io)...)
	return root
}

// serverFlags are the flags of every subcommand that talks to a server.
type serverFlags struct {
	timeout         time.Duration
	resetOnProgress bool
	maxTotal        time.Duration
	maxPending      int
	maxLineBytes    byteSize
	stderrBytes     byteSize
	killAfter       time.Duration
	env             []string
	passEnv         []string
	cwd             string
	strict          bool
	protocolVersion string
	era             string
	json            bool
	trace           bool
	record          string
	redact          []string
	rec             *capture.Recorder // the --record capture of this run, once started

	// How the server's requests are answered (cli_answers.go).
	answers answerFlags

	// HTTP (--url instead of a command).
	url         string
	mode        string
	headers     []string
	bearerEnv   string
	insecure    bool
	reconnect   bool
	connTimeout time.Duration

	// OAuth (--oauth): the flow runs in the transport on a 401.
	oauth          bool
	oauthClientID  string
	oauthSecretEnv string
	oauthBrowser   string
	oauthTimeout   time.Duration
	// promptTo receives the authorization URL to open (the command's
	// stderr; nil: os.Stderr).
	promptTo io.Writer
	// promptURL, when set (the UI), receives the authorization URL instead
	// of promptTo.
	promptURL func(authURL string)
	// oauthSecrets are the tokens the flow learnt, redacted in captures.
	oauthSecrets secretSink

	// A server from a host's config file (--config, --server, --input):
	// see hostflags.go. header holds the entry's headers; secrets are
	// KEY=VALUE pairs of the entry (header values, password inputs) that
	// captures redact.
	config  string
	server  string
	inputs  []string
	header  http.Header
	secrets []string
	// hide are the entry's password input values, hidden where the
	// server's command line is shown.
	hide []string
}

func (f *serverFlags) register(fs *pflag.FlagSet) {
	f.maxLineBytes = transport.DefaultMaxLineBytes
	f.stderrBytes = transport.DefaultStderrBytes
	fs.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "deadline of each request")
	fs.BoolVar(&f.resetOnProgress, "timeout-reset-on-progress", false, "restart a request's deadline when the server reports progress for it")
	fs.DurationVar(&f.maxTotal, "max-total-timeout", 0, "with --timeout-reset-on-progress, the longest a request may live (default 10 x --timeout)")
	fs.IntVar(&f.maxPending, "max-pending", client.DefaultMaxPending, "requests in flight at most; past it a request fails with MCP_BUSY")
	fs.Var(&f.maxLineBytes, "max-line-bytes", "longest line accepted from the server's stdout (e.g. 8MiB); longer is MCP_PROTOCOL")
	fs.Var(&f.stderrBytes, "stderr-bytes", "bytes of the server's stderr tail kept (e.g. 64KiB)")
	fs.DurationVar(&f.killAfter, "kill-after", transport.DefaultKillAfter, "grace period on close: after closing stdin, and again after SIGTERM (CTRL_BREAK_EVENT on Windows)")
	fs.StringArrayVar(&f.env, "env", nil, "set KEY=VALUE in the server's environment (repeatable)")
	fs.StringArrayVar(&f.passEnv, "pass-env", nil, "pass variable NAME from sonde's environment to the server (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory of the server (default: sonde's)")
	fs.BoolVar(&f.strict, "strict", false, "treat a malformed line on stdout as corruption: fail everything pending and close the server")
	fs.StringVar(&f.protocolVersion, "protocol-version", "2025-11-25", "protocol version asked for in initialize")
	fs.StringVar(&f.era, "era", string(client.EraLegacy), "protocol `ERA`: legacy (initialize), modern (2026-07-28: server/discover, version and capabilities in every request's _meta, input_required retries) or auto (server/discover, falling back to initialize on any error or timeout)")
	fs.BoolVar(&f.json, "json", false, "machine-readable output")
	fs.BoolVar(&f.trace, "trace", false, "print every frame, lifecycle event and stderr chunk on stderr as it happens")
	fs.StringVar(&f.record, "record", "", "write the session to FILE as it happens, mode 0600 (a capture: docs/capture-format.md); FILE must not exist")
	fs.StringArrayVar(&f.redact, "redact", nil, "in captures, replace what matches REGEX with «redacted» (repeatable); --env, --pass-env and --header values always are, and so are a --server entry's header and password input values and the tokens --oauth obtains")
	fs.StringVar(&f.url, "url", "", "connect to the MCP server at `URL` over HTTP instead of starting a command")
	fs.StringVar(&f.mode, "transport", string(transport.ModeAuto), "with --url: auto, streamable (Streamable HTTP) or sse (legacy HTTP+SSE); auto tries Streamable HTTP and falls back to SSE")
	fs.StringArrayVar(&f.headers, "header", nil, "with --url: send header 'Name: value' on every request (repeatable; values are never shown or recorded)")
	fs.StringVar(&f.bearerEnv, "bearer-token-env", "", "with --url: send 'Authorization: Bearer <token>' with the token read from environment variable `NAME`")
	fs.BoolVar(&f.insecure, "insecure", false, "with --url: do not verify the server's TLS certificate (dangerous)")
	fs.BoolVar(&f.oauth, "oauth", false, "with --url: on a 401 (or a 403 insufficient_scope: step-up), run the OAuth 2.1 authorization code flow with PKCE (discovery, dynamic registration unless --oauth-client-id, a loopback redirect on 127.0.0.1) and send the access token on every request; the authorization URL is printed on stderr (in the UI, in a dialog); sonde never opens a browser")
	fs.StringVar(&f.oauthClientID, "oauth-client-id", "", "with --oauth: use this registered client `ID` instead of dynamic client registration")
	fs.StringVar(&f.oauthSecretEnv, "oauth-client-secret-env", "", "with --oauth-client-id: read the client secret from environment variable `NAME` (never shown)")
	fs.StringVar(&f.oauthBrowser, "oauth-browser", string(transport.BrowserPrint), "with --oauth: print (print the authorization URL and wait for the redirect) or fetch (GET the URL and follow its redirects: for authorization servers without a login page, in tests and automation)")
	fs.DurationVar(&f.oauthTimeout, "oauth-timeout", transport.DefaultOAuthTimeout, "with --oauth: how long one authorization may take, the visit to the authorization URL included")
	fs.BoolVar(&f.reconnect, "reconnect", false, "with --url: when the server ends the session (MCP_SESSION_EXPIRED), initialize a new one and retry once")
	f.answers.register(fs)
	fs.DurationVar(&f.connTimeout, "connect-timeout", transport.DefaultConnectTimeout, "with --url: how long the legacy SSE endpoint event, and the DELETE that ends a session, may take")
	f.registerConfig(fs)
}

// serverArgv splits args at "--": the n arguments of the subcommand itself,
// then the server command. wrongCount is the usage message when there are
// not exactly n arguments before "--". With --url there is no command: the
// argv returned is nil.
func (f *serverFlags) serverArgv(cmd *cobra.Command, args []string, n int, wrongCount string) ([]string, []string, error) {
	if f.server != "" || f.config != "" {
		return f.configArgv(cmd, args, n, wrongCount)
	}
	if err := f.checkInputFlag(); err != nil {
		return nil, nil, err
	}
	dash := cmd.ArgsLenAtDash()
	if f.url != "" {
		if dash >= 0 && dash < len(args) {
			return nil, nil, usagef("give either --url or a server command after --, not both")
		}
		if len(args) != n {
			return nil, nil, usagef(strings.Replace(wrongCount, "before --", "(with --url)", 1))
		}
		return args, nil, nil
	}
	if dash < 0 || dash >= len(args) {
		return nil, nil, usagef("no server command: put it after --, e.g. sonde " + cmd.Name() + " ... -- ./server --flag, or connect with --url URL")
	}
	if dash != n {
		return nil, nil, usagef(wrongCount)
	}
	return args[:dash], args[dash:], nil
}

// session is a connected, initialized client and what runs beside it.
type session struct {
	c     *client.Client
	trace *tracer
	// rec is the capture this session owns (closes), recTo its file.
	rec    *capture.Recorder
	recTo  string
	closed bool

	f    *serverFlags // to reconnect
	io   streams
	argv []string
}

// retry runs op; when it fails with MCP_SESSION_EXPIRED and --reconnect is
// set, it starts a new session (a new initialize) and runs op once more.
func (s *session) retry(ctx context.Context, op func(c *client.Client) error) error {
	err := op(s.c)
	if !s.f.reconnect || !errors.Is(err, client.ErrExpired) {
		return err
	}
	fmt.Fprintln(s.io.err, "sonde: "+err.Error()+"; --reconnect: starting a new session")
	ns, cerr := s.f.connect(ctx, s.io, s.argv)
	if cerr != nil {
		return cerr
	}
	// The capture goes on in the same file: the new session owns it now.
	ns.rec, ns.recTo, s.rec = s.rec, s.recTo, nil
	s.close()
	*s = *ns
	return op(s.c)
}

// clientConfig turns the flags into the client's options and the server's
// process configuration.
func (f *serverFlags) clientConfig(argv []string) (client.Options, transport.StdioConfig, error) {
	if f.maxPending <= 0 {
		return client.Options{}, transport.StdioConfig{}, usagef("--max-pending must be at least 1")
	}
	env, err := transport.BuildEnv(os.Environ(), f.passEnv, f.env)
	if err != nil {
		return client.Options{}, transport.StdioConfig{}, usagef(err.Error())
	}
	era, err := client.ParseEra(f.era)
	if err != nil {
		return client.Options{}, transport.StdioConfig{}, usagef("--era: " + err.Error())
	}
	opts := client.Options{
		Timeout: f.timeout, ResetOnProgress: f.resetOnProgress, MaxTotalTimeout: f.maxTotal,
		MaxPending: f.maxPending, MaxLineBytes: int(f.maxLineBytes), Strict: f.strict,
		ProtocolVersion: f.protocolVersion, ClientVersion: version, Era: era,
	}
	if opts.ServerRequests, err = f.answers.serverRequests(); err != nil {
		return client.Options{}, transport.StdioConfig{}, err
	}
	cfg := transport.StdioConfig{
		Argv: argv, Dir: f.cwd, Env: env, MaxLineBytes: int(f.maxLineBytes),
		StderrBytes: int(f.stderrBytes), KillAfter: f.killAfter, Hide: f.hide,
	}
	return opts, cfg, nil
}

// dialer returns how to reach the server: the process cfg (from
// clientConfig) as a subprocess, or --url over HTTP. name is the
// transport's name and what the server is, for display.
func (f *serverFlags) dialer(cfg transport.StdioConfig) (d client.Dialer, name, what string, err error) {
	if f.url == "" {
		if len(f.headers) > 0 || f.bearerEnv != "" || f.insecure || f.reconnect {
			return nil, "", "", usagef("--header, --bearer-token-env, --insecure and --reconnect need --url")
		}
		if f.oauth {
			return nil, "", "", usagef("--oauth needs --url")
		}
		return client.Stdio(cfg), "stdio", strings.Join(cfg.Argv, " "), nil
	}
	hc, err := f.httpConfig()
	if err != nil {
		return nil, "", "", err
	}
	return client.HTTP(hc), "http", f.url, nil
}

// httpConfig turns the HTTP flags into the transport's configuration.
func (f *serverFlags) httpConfig() (transport.HTTPConfig, error) {
	mode := transport.HTTPMode(f.mode)
	switch mode {
	case transport.ModeAuto, transport.ModeStreamable, transport.ModeSSE:
	default:
		return transport.HTTPConfig{}, usagef(fmt.Sprintf("--transport %q: want auto, streamable or sse", f.mode))
	}
	h := http.Header{}
	for _, kv := range f.headers {
		name, value, ok := strings.Cut(kv, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return transport.HTTPConfig{}, usagef(fmt.Sprintf("--header %q: want 'Name: value'", redactArg(kv)))
		}
		h.Add(name, strings.TrimSpace(value))
	}
	// Headers of a config entry (--server), unless --header sets the same.
	for name, values := range f.header {
		if h.Values(name) == nil {
			h[name] = values
		}
	}
	if f.bearerEnv != "" {
		tok := strings.TrimSpace(os.Getenv(f.bearerEnv))
		if tok == "" {
			return transport.HTTPConfig{}, usagef("--bearer-token-env " + f.bearerEnv + ": the variable is unset or empty")
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	oauth, err := f.oauthConfig()
	if err != nil {
		return transport.HTTPConfig{}, err
	}
	return transport.HTTPConfig{
		URL: f.url, Mode: mode, Header: h, Insecure: f.insecure,
		MaxEventBytes: int(f.maxLineBytes), ConnectTimeout: f.connTimeout, OAuth: oauth,
	}, nil
}

// oauthConfig turns the --oauth flags into the transport's OAuth
// configuration (nil without --oauth).
func (f *serverFlags) oauthConfig() (*transport.OAuthConfig, error) {
	if !f.oauth {
		if f.oauthClientID != "" || f.oauthSecretEnv != "" {
			return nil, usagef("--oauth-client-id and --oauth-client-secret-env need --oauth")
		}
		return nil, nil
	}
	browser := transport.OAuthBrowser(f.oauthBrowser)
	if browser != transport.BrowserPrint && browser != transport.BrowserFetch {
		return nil, usagef(fmt.Sprintf("--oauth-browser %q: want print or fetch", f.oauthBrowser))
	}
	if f.oauthTimeout <= 0 {
		return nil, usagef("--oauth-timeout must be positive")
	}
	cfg := &transport.OAuthConfig{ClientID: f.oauthClientID, Browser: browser, Timeout: f.oauthTimeout}
	if f.oauthSecretEnv != "" {
		if f.oauthClientID == "" {
			return nil, usagef("--oauth-client-secret-env needs --oauth-client-id")
		}
		cfg.ClientSecret = strings.TrimSpace(os.Getenv(f.oauthSecretEnv))
		if cfg.ClientSecret == "" {
			return nil, usagef("--oauth-client-secret-env " + f.oauthSecretEnv + ": the variable is unset or empty")
		}
	}
	w := f.promptTo
	if w == nil {
		w = os.Stderr
	}
	cfg.OnSecret = f.oauthSecrets.add
	cfg.Prompt = func(authURL string) {
		if f.promptURL != nil {
			f.promptURL(authURL)
			return
		}
		fmt.Fprintf(w, "sonde: open this URL to authorize sonde (waiting up to %v for the redirect):\n%s\n", f.oauthTimeout, authURL)
	}
	return cfg, nil
}

// redactArg shows a header flag with its value hidden.
func redactArg(kv string) string {
	name, _, ok := strings.Cut(kv, ":")
	if !ok {
		return transport.Redacted
	}
	return name + ": " + transport.Redacted
}

// connect starts the server, runs the handshake, and returns the session.
// The caller must call close.
func (f *serverFlags) connect(ctx context.Context, io streams, argv []string) (*session, error) {
	opts, cfg, err := f.clientConfig(argv)
	if err != nil {
		return nil, err
	}
	f.promptTo = io.err
	dial, _, _, err := f.dialer(cfg)
	if err != nil {
		return nil, err
	}
	if f.insecure {
		fmt.Fprintln(io.err, "sonde: warning: --insecure: the server's TLS certificate is not verified")
	}
	// The recorder is created by the first connect of a command; a
	// reconnect (--reconnect) follows its new client into the same file.
	var rec *capture.Recorder
	if f.record != "" && f.rec == nil {
		if rec, err = f.startRecorder(f.record, argv); err != nil {
			return nil, err
		}
		f.rec = rec
	}
	c := client.New(opts)
	s := &session{c: c, f: f, io: io, argv: argv, rec: rec, recTo: f.record}
	if f.rec != nil {
		f.rec.Follow(c)
	}
	if !liveFrom(ctx).add(c) {
		s.close()
		return nil, &client.Error{Code: client.CodeAborted, Message: "interrupted before the server started"}
	}
	if f.trace {
		s.trace = startTracer(c, io.err)
	}
	err = c.Connect(dial)
	var res *mcp.InitializeResult
	if err == nil {
		res, err = c.Initialize(ctx)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	if io.server != nil {
		*io.server = strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version)
	}
	return s, nil
}

func (s *session) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.c.Close()
	if s.trace != nil {
		s.trace.wait()
	}
	if s.rec != nil {
		reportCapture(s.io.err, s.recTo, s.rec.Close())
	}
}

// byteSize is a flag value in bytes that accepts KiB/MiB/GiB (and KB/MB/GB
// as the same binary units) suffixes.
type byteSize int

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
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
	*b = byteSize(n * mult)
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
