// Package mcpserver is sonde's own MCP server (sonde mcp, docs/mcp.md): a
// developer's coding agent starts sessions on the MCP server it is writing,
// calls it, and reads what sonde's panes show (frames with their verdicts,
// pending requests, stderr, the why of a timeout) as MCP tools.
//
// The protocol side is the official Go SDK; the sessions are sonde's own
// client, opened by the command line (Options.Open) exactly as sonde call
// opens one, so every verdict is sonde's.
package mcpserver

import (
	"cmp"
	"context"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
)

// DefaultMaxSessions is --max-sessions' default.
const DefaultMaxSessions = 8

// Launch is what session_start asked for, after the allow list passed it:
// a command line (Argv), a URL, or a configured host server by name.
type Launch struct {
	Argv   []string
	URL    string
	Server string
	// r29-tools: Record is the capture file the session records to ("":
	// none); ProtocolVersion and ServerRequests, when set, replace the
	// defaults (replay_against takes them from the capture, as sonde
	// replay --against does).
	Record          string
	ProtocolVersion string
	ServerRequests  *client.ServerRequests
}

// Conn is a connected, initialized session of sonde's client, as the
// command line opened it; Close ends it (the server's process too).
type Conn interface {
	Client() *client.Client
	// Redactor replaces the session's secrets (the --env values, a
	// configured server's header values and what its references
	// brought in) in what the tools return; nil: none.
	Redactor() *capture.Redactor
	Close()
}

// Opener starts (or dials) what l names and runs the handshake, as sonde
// call does. follow is called with the client before it connects, so a
// subscription made there sees every event, the handshake's included. It
// returns a *client.Error (or an error wrapping one) on failure.
type Opener func(ctx context.Context, l Launch, follow func(*client.Client)) (Conn, error)

// Hosts is what the command line knows of the hosts' configured servers
// (their discovery and the approval rules of sonde --all live there).
type Hosts interface {
	// Names lists the configured servers a session may start by name.
	Names() []string
}

// Options configure a Server.
type Options struct {
	// Allow are the command lines --allow permits, each word for word as
	// given (split as a shell splits words; never run through a shell).
	Allow []string
	// MaxSessions caps the sessions open at once (0: DefaultMaxSessions).
	MaxSessions int
	// Hosts are the configured servers (nil: none).
	Hosts Hosts
	// Version is sonde's version, sent as the server's.
	Version string
	// Open opens a session (required).
	Open Opener
	// Host are the command line's doctor, tapped sessions and inject
	// (host_tools.go; r29-tools).
	Host HostFuncs
	// PageSize is the page of resources/list and the other lists (0:
	// DefaultPageSize).
	PageSize int
}

// Server is sonde's MCP server. New builds it; Run serves one connection
// (stdio), Handler serves Streamable HTTP.
type Server struct {
	opts     Options
	allow    *allowList
	sdk      *sdk.Server
	sessions *registry
	res      *resourceState // resources.go (r29-tools)
}

// ErrNoOpener is New's error without Options.Open.
var ErrNoOpener = errors.New("mcpserver: Options.Open is required")

// New builds the server and registers every tool and resource.
func New(opts Options) (*Server, error) {
	if opts.Open == nil {
		return nil, ErrNoOpener
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	allow, err := parseAllowList(opts.Allow)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, allow: allow, sessions: newRegistry(opts.MaxSessions)}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "sonde", Title: "sonde: an MCP inspector", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		// r29-tools: resources.go, resources_watch.go.
		PageSize:           cmp.Or(opts.PageSize, DefaultPageSize),
		SubscribeHandler:   s.resourceSubscribe,
		UnsubscribeHandler: s.resourceUnsubscribe,
		// A client's MCP session that ends (stdio's only one, an HTTP
		// session's DELETE or timeout) takes the sessions it started.
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) {
			ss := req.Session
			go func() {
				_ = ss.Wait()
				s.sessions.closeOwned(ss)
			}()
		},
	})
	// Each family of tools registers itself from its own file.
	s.registerSessionTools() // session_*: session_tools.go
	// r29-tools: capture_tools*.go, host_tools*.go, resources*.go.
	s.registerCaptureTools() // capture_lint, capture_stats, capture_diff, replay_against
	s.registerHostTools()    // doctor, sessions_list, session_open
	s.registerResources()    // sonde:// capture resources
	return s, nil
}

// instructions is what the server tells the agent it is for.
const instructions = `sonde inspects MCP servers. session_start launches (or connects to) a server and returns a session id; session_call calls one of its tools and says what sonde saw (the verdicts: late, duplicate, unknown id, protocol violations); session_pending, session_frames, session_stderr and session_explain show what is in flight, what went over the wire, what the server printed, and why a request timed out; session_stop ends it.`

// Close ends every session and its process.
func (s *Server) Close() {
	s.sessions.closeAll()
	s.closeResources() // r29-tools: resources_watch.go
}

// Run serves one connection on t (stdio: sdk.IOTransport) until the
// client disconnects or ctx ends, then closes every session.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	defer s.Close()
	return s.sdk.Run(ctx, t)
}
