package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/loopback"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// mcpOptions are sonde mcp's flags.
type mcpOptions struct {
	allow       []string
	maxSessions int
	listen      string
	allowRemote bool
	env         []string
	passEnv     []string
	config      string
}

// NewCmdMCP is `sonde mcp`: sonde as an MCP server (docs/mcp.md), so a
// coding agent can start, call and inspect the server it is writing.
func NewCmdMCP(env *cmdutil.Env) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [--allow 'COMMAND [ARG...]']... [--listen ADDR]",
		Short: "Serve sonde's inspector as MCP tools, for a coding agent (docs/mcp.md)",
		Long: `sonde mcp is an MCP server on stdin/stdout: a host (Claude Code, Cursor, Gemini CLI...)
launches it, and its agent gets sonde's inspector as tools: session_start launches the
server being written, session_call calls it, session_pending, session_frames,
session_stderr and session_explain show what sonde sees (verdicts, requests in flight,
stderr, why a request timed out), session_stop ends it.

  claude mcp add sonde -- sonde mcp --allow ./my-server

session_start launches only what it is allowed to: a command line given with --allow
(word for word: the command and its arguments, split as a shell splits words but never
run through a shell), or a server of the host configs by name (project-scope servers
only once approved, as with sonde --all). URLs: loopback ones, and those given with --allow.
What a server says is redacted, escaped and capped in every answer.

With --listen ADDR it serves Streamable HTTP on http://ADDR/mcp instead: loopback only
unless --allow-remote, the Host and Origin headers checked, and the bearer token it prints
on stderr at start required. Sessions end with session_stop, with the client's session, and
with sonde mcp (SIGTERM included). docs/mcp.md has every tool.
`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd, env, &o)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.allow, "allow", nil, "a command line session_start may launch, word for word, e.g. './my-server --flag' (repeatable)")
	fs.IntVar(&o.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "sessions open at once at most")
	fs.StringVar(&o.listen, "listen", "", "serve Streamable HTTP on `ADDR` (loopback, e.g. 127.0.0.1:0) instead of stdio")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "with --listen: accept an address that is not loopback")
	fs.StringArrayVar(&o.env, "env", nil, "set KEY=VALUE in the environment of every server a session starts (repeatable; values are redacted in what the tools return)")
	fs.StringVar(&o.config, "config", "", "read the servers a session may start by name from this host config `FILE` only (default: every host's known files)")
	fs.StringArrayVar(&o.passEnv, "pass-env", nil, "pass variable NAME from sonde's environment to every server a session starts (repeatable)")
	return cmd
}

func runMCP(cmd *cobra.Command, env *cmdutil.Env, o *mcpOptions) error {
	ctx := cmd.Context()
	hosts, err := loadMCPHosts(o.config)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Allow:       o.allow,
		MaxSessions: o.maxSessions,
		Hosts:       hosts,
		Version:     cmdutil.VersionString(),
		Open:        mcpOpener(cmd, env, o, hosts),
		Host:        mcpHost(), // mcp_host.go (r29-tools)
	})
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	defer srv.Close()
	if o.listen != "" {
		return serveMCPHTTP(ctx, env, o, srv)
	}
	return srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(env.In), Writer: nopWriteCloser{env.Out}})
}

// serveMCPHTTP serves srv over Streamable HTTP on --listen until ctx
// ends: loopback only unless --allow-remote, behind a bearer token made
// now and printed on stderr with the URL.
func serveMCPHTTP(ctx context.Context, env *cmdutil.Env, o *mcpOptions, srv *mcpserver.Server) error {
	host, _, err := net.SplitHostPort(o.listen)
	if err != nil {
		return cmdutil.Usagef(fmt.Sprintf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:0", o.listen))
	}
	if !o.allowRemote && !loopback.Host(host) {
		return cmdutil.Usagef(fmt.Sprintf("--listen %s is not a loopback address: sonde mcp starts servers for whoever calls it; listen on 127.0.0.1, or give --allow-remote", o.listen))
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	token := hex.EncodeToString(raw[:])
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cmdutil.Usagef(fmt.Sprintf("--listen %s: %v", o.listen, err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler(mcpserver.HTTPOptions{Token: token, AllowRemote: o.allowRemote}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Err, "sonde mcp: listening on http://%s/mcp\ntoken: %s\n", ln.Addr(), token)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = hs.Shutdown(shut)
		if err != nil {
			hs.Close()
		}
		<-served
		err = nil
	}
	return err
}

// mcpOpener opens sessions as sonde call does: connect.OpenFollowing
// with the default server flags, the run's live clients (a second
// interrupt kills them), and what connect writes kept off sonde mcp's
// stdout (which is the MCP stream).
func mcpOpener(cmd *cobra.Command, env *cmdutil.Env, o *mcpOptions, hosts *mcpHosts) mcpserver.Opener {
	live := cmdutil.LiveFrom(cmd.Context())
	return func(ctx context.Context, l mcpserver.Launch, follow func(*client.Client)) (mcpserver.Conn, error) {
		var f connect.Flags
		f.Register(pflag.NewFlagSet("mcp-session", pflag.ContinueOnError))
		f.URL, f.Env, f.PassEnv = l.URL, o.env, o.passEnv
		f.Record = l.Record // r29-tools: the session's capture (resources.go)
		t := f.Target(l.Argv)
		if l.Server != "" {
			var err error
			if t, err = hosts.target(cmd, &f, l.Server); err != nil {
				return nil, err
			}
		}
		if l.ProtocolVersion != "" { // replay_against: the capture's (r29-tools)
			t.ProtocolVersion = l.ProtocolVersion
		}
		if l.ServerRequests != nil {
			t.ServerRequests = l.ServerRequests
		}
		senv := cmdutil.NewEnv(strings.NewReader(""), io.Discard, env.Err)
		s, err := connect.OpenFollowing(cmdutil.WithLive(ctx, live), senv, &f, t, follow)
		if err != nil {
			return nil, err
		}
		// The secrets captures redact: the environment given to the
		// server, a configured entry's header values and references.
		red, err := capture.NewRedactor(append(append([]string(nil), t.Env...), t.Secrets...), nil)
		if err != nil {
			s.Close()
			return nil, err
		}
		return sessionConn{s: s, red: red}, nil
	}
}

// sessionConn is a connect.Session as mcpserver sees it.
type sessionConn struct {
	s   *connect.Session
	red *capture.Redactor
}

func (c sessionConn) Client() *client.Client      { return c.s.Client }
func (c sessionConn) Redactor() *capture.Redactor { return c.red }
func (c sessionConn) Close()                      { c.s.Close() }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
