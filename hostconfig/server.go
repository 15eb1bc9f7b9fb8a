// Package hostconfig reads the files in which MCP hosts (Claude Desktop,
// Claude Code, Cursor, VS Code, Windsurf, Cline, Gemini CLI, Codex, Zed,
// opencode, Goose, LM Studio) list their servers, into one list of servers
// and one list of problems. Codex's file is TOML and Goose's YAML; the
// others are JSON or JSONC.
//
// Reading never stops at a bad file: a file that cannot be read, is not
// JSON, or has the wrong shape becomes a Problem naming the file and the
// reason, and so does a single bad server entry (the file's other servers
// are still listed). Values are kept as written; Resolve expands the
// variable references of one server (${env:NAME}, ${NAME:-default},
// ${workspaceFolder}, ${input:ID}, …) when it is about to be started, and
// SetApprovals marks Claude Code's .mcp.json servers with the approval
// Claude Code's settings files give them. Wrap and Unwrap, the only
// edits, are pure functions over a file's bytes (the caller writes) that put sonde tap
// in front of stdio entries' commands and take it out again, editing only
// those values so that comments and layout are kept.
package hostconfig

import (
	"errors"
	"fmt"
	"sort"
)

// Transport is how a server is reached.
type Transport string

// The transports of a server entry.
const (
	// Stdio is a command started as a subprocess.
	Stdio Transport = "stdio"
	// HTTP is a URL tried with Streamable HTTP first, then legacy SSE (VS
	// Code's "http", Cursor's and Windsurf's URL entries).
	HTTP Transport = "http"
	// Streamable is a URL reached with Streamable HTTP only (Claude Code's
	// "http", Cline's "streamableHttp").
	Streamable Transport = "streamable-http"
	// SSE is a URL reached with the legacy HTTP+SSE transport.
	SSE Transport = "sse"
)

// Scopes of a server beyond paths.Scope's "user" and "project".
const (
	// ScopeLocal is a Claude Code server of one project kept in the user's
	// ~/.claude.json ("projects" map).
	ScopeLocal = "local"
)

// HostFile is the host of a --config file whose host is not recognised.
const HostFile = "file"

// Server is one server entry of a host config file, as written (variable
// references not expanded).
type Server struct {
	Name  string `json:"name"`
	Host  string `json:"host"`  // paths.ClaudeDesktop, … or HostFile
	Scope string `json:"scope"` // "user", "project" or "local"
	File  string `json:"file"`
	// Project is the project folder of a local-scope Claude Code entry.
	Project string `json:"project,omitempty"`
	// Disabled is set when the host has the entry turned off ("disabled":
	// true); sonde can still start it.
	Disabled bool `json:"disabled,omitempty"`
	// Approval is, for a Claude Code project server (.mcp.json), whether
	// Claude Code's settings enable it (SetApprovals); the runs over every
	// server start such a server unnamed only when it is enabled (or
	// approved in sonde), a named one in every case.
	Approval  Approval  `json:"approval,omitempty"`
	Transport Transport `json:"transport"`

	// A stdio entry.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"-"` // values may be secrets: never printed
	EnvFile string            `json:"envFile,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// A URL entry.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"-"` // values may be secrets: never printed

	dialect dialect
	inputs  []Input
	secrets []string // a resolved server's password input values
}

// Where is the host and scope, e.g. "VS Code · project".
func (s Server) Where() string { return s.Host + " · " + s.Scope }

// EnvNames returns the names of the entry's environment variables, sorted.
func (s Server) EnvNames() []string { return sortedKeys(s.Env) }

// HeaderNames returns the names of the entry's headers, sorted.
func (s Server) HeaderNames() []string { return sortedKeys(s.Headers) }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Errors a Problem wraps, to tell problems apart with errors.Is.
var (
	// ErrRead: the file exists but could not be read.
	ErrRead = errors.New("cannot read")
	// ErrSyntax: the file is not valid JSON (JSONC for VS Code and Cursor).
	ErrSyntax = errors.New("not valid JSON")
	// ErrShape: the JSON does not have the shape of a server list, or an
	// entry has a field of the wrong type or is incomplete.
	ErrShape = errors.New("wrong shape")
	// ErrReference: a variable reference cannot be resolved (an unset
	// variable, an unknown input id, an unreadable envFile).
	ErrReference = errors.New("unresolved reference")
	// ErrNotFound: no server has the name asked for.
	ErrNotFound = errors.New("no such server")
	// ErrAmbiguous: several servers have the name asked for.
	ErrAmbiguous = errors.New("ambiguous server name")
)

// Problem is what went wrong with a file or with one server entry in it.
type Problem struct {
	File   string `json:"file"`
	Server string `json:"server,omitempty"` // "" when the whole file is concerned
	Err    error  `json:"-"`
}

// Error returns "FILE: REASON" or "FILE: server "NAME": REASON".
func (p *Problem) Error() string {
	if p.Server != "" {
		return fmt.Sprintf("%s: server %q: %v", p.File, p.Server, p.Err)
	}
	return fmt.Sprintf("%s: %v", p.File, p.Err)
}

// Unwrap returns the reason.
func (p *Problem) Unwrap() error { return p.Err }
