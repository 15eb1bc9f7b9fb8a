// Package paths says where things are on each operating system: sonde's
// own folders (captures, logs) and the files in which MCP hosts (Claude
// Desktop, Claude Code, Cursor, VS Code, Windsurf, Cline, Gemini CLI, Codex, Zed,
// opencode, Goose, LM Studio) list their
// servers. It only computes paths; it never creates or reads anything.
//
// Everything goes through For, which takes the OS, the home folder and an
// environment lookup as inputs, so that the answer for every OS can be
// tested on any of them. Current calls it for the running process.
package paths

import (
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"
)

// ErrNoHome is returned when the home folder is unknown or not absolute:
// nothing can be placed without it.
var ErrNoHome = errors.New("home folder unknown")

// Scope says where a host's config file applies.
type Scope uint8

// The scopes of a host config file.
const (
	// User is the user's own file; its Path is absolute.
	User Scope = iota + 1
	// Project is a file inside a project folder; its Path is relative to
	// the project's root.
	Project
)

// String returns "user" or "project".
func (s Scope) String() string {
	switch s {
	case User:
		return "user"
	case Project:
		return "project"
	}
	return "?"
}

// The hosts whose config files For knows.
const (
	ClaudeDesktop = "Claude Desktop"
	ClaudeCode    = "Claude Code"
	Cursor        = "Cursor"
	VSCode        = "VS Code"
	Windsurf      = "Windsurf"
	Cline         = "Cline"
	Gemini        = "Gemini CLI"
	Codex         = "Codex"
	Zed           = "Zed"
	Opencode      = "opencode"
	Goose         = "Goose"
	LMStudio      = "LM Studio"
)

// HostConfig is a file in which an MCP host lists its servers. The file
// may not exist: it is where the host looks.
type HostConfig struct {
	Host  string // one of the host names above
	Scope Scope
	Path  string
}

// Paths are sonde's folders and the host config files of one OS.
type Paths struct {
	// Captures is the folder for recorded sessions.
	Captures string
	// Logs is the folder for sonde's own logs.
	Logs string
	// Sessions is the folder of the sessions sonde tap records.
	Sessions string
	// Baselines is the folder of the tool definitions sonde baseline
	// accepted, one file per server label (beside the sessions: state).
	Baselines string
	// State is the folder of what sonde keeps per user across runs (the
	// server manager's hashes, failure counts and quarantines; the last
	// failure report).
	State string
	// Hosts are the known host config files, user files first for each
	// host, in a fixed order.
	Hosts []HostConfig
}

// For returns the paths for goos (a GOOS value; every OS other than
// "darwin" and "windows" is treated as Linux), the home folder home, and
// getenv (os.Getenv for the running process). Paths are written in goos's
// own syntax. An environment variable that is empty or holds a relative
// path is ignored, as the XDG spec asks. The folders:
//
//   - Linux: captures in $XDG_DATA_HOME/sonde/captures (default
//     ~/.local/share), logs and tapped sessions in $XDG_STATE_HOME/sonde/logs
//     and $XDG_STATE_HOME/sonde/sessions (default ~/.local/state); the
//     config folder is $XDG_CONFIG_HOME (~/.config).
//   - macOS: captures in ~/Library/Application Support/sonde/captures,
//     sessions in ~/Library/Application Support/sonde/sessions, logs in
//     ~/Library/Logs/sonde; the config folder is ~/Library/Application
//     Support. The XDG variables are not used.
//   - Windows: captures in %LOCALAPPDATA%\sonde\captures, sessions in
//     %LOCALAPPDATA%\sonde\sessions and logs in %LOCALAPPDATA%\sonde\logs
//     (local, not roaming, AppData: captures can be large, and a roaming
//     profile is copied at every sign-in); the config folder is %APPDATA%.
//     Without the variables, AppData\Local and AppData\Roaming under home.
//
// The baselines (sonde baseline) are in a baselines folder beside the
// sessions, and the state folder (State) is sonde/state beside them. On
// every OS, SONDE_HOME (absolute) puts the sessions in $SONDE_HOME/sessions,
// the baselines in $SONDE_HOME/baselines and the state in $SONDE_HOME/state.
//
// The host files: Claude Desktop's Claude/claude_desktop_config.json and VS
// Code's Code/User/mcp.json are in the config folder, and so is Cline's
// Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json.
// Claude Code (~/.claude.json; project .mcp.json), Cursor (~/.cursor/mcp.json;
// project .cursor/mcp.json) and Windsurf (~/.codeium/windsurf/mcp_config.json)
// use the home folder on every OS; VS Code's project file is .vscode/mcp.json.
func For(goos, home string, getenv func(string) string) (Paths, error) {
	s := syntax{windows: goos == "windows"}
	if !s.isAbs(home) {
		return Paths{}, fmt.Errorf("%w: %q is not an absolute path", ErrNoHome, home)
	}
	env := func(name string) string {
		if v := getenv(name); s.isAbs(v) {
			return v
		}
		return ""
	}
	or := func(v, fallback string) string {
		if v != "" {
			return v
		}
		return fallback
	}
	var p Paths
	var config string
	switch goos {
	case "darwin":
		support := s.join(home, "Library", "Application Support")
		config = support
		p.Captures = s.join(support, "sonde", "captures")
		p.Sessions = s.join(support, "sonde", "sessions")
		p.Baselines = s.join(support, "sonde", "baselines")
		p.Logs = s.join(home, "Library", "Logs", "sonde")
		p.State = s.join(support, "sonde", "state")
	case "windows":
		local := or(env("LOCALAPPDATA"), s.join(home, "AppData", "Local"))
		config = or(env("APPDATA"), s.join(home, "AppData", "Roaming"))
		p.Captures = s.join(local, "sonde", "captures")
		p.Sessions = s.join(local, "sonde", "sessions")
		p.Baselines = s.join(local, "sonde", "baselines")
		p.Logs = s.join(local, "sonde", "logs")
		p.State = s.join(local, "sonde", "state")
	default:
		config = or(env("XDG_CONFIG_HOME"), s.join(home, ".config"))
		p.Captures = s.join(or(env("XDG_DATA_HOME"), s.join(home, ".local", "share")), "sonde", "captures")
		state := or(env("XDG_STATE_HOME"), s.join(home, ".local", "state"))
		p.Logs = s.join(state, "sonde", "logs")
		p.Sessions = s.join(state, "sonde", "sessions")
		p.Baselines = s.join(state, "sonde", "baselines")
		p.State = s.join(state, "sonde", "state")
	}
	if v := env("SONDE_HOME"); v != "" {
		p.Sessions = s.join(v, "sessions")
		p.Baselines = s.join(v, "baselines")
		p.State = s.join(v, "state")
	}
	vscode := s.join(config, "Code", "User")
	p.Hosts = []HostConfig{
		{ClaudeDesktop, User, s.join(config, "Claude", "claude_desktop_config.json")},
		{ClaudeCode, User, s.join(home, ".claude.json")},
		{ClaudeCode, Project, ".mcp.json"},
		{Cursor, User, s.join(home, ".cursor", "mcp.json")},
		{Cursor, Project, s.rel(".cursor", "mcp.json")},
		{VSCode, User, s.join(vscode, "mcp.json")},
		{VSCode, Project, s.rel(".vscode", "mcp.json")},
		{Windsurf, User, s.join(home, ".codeium", "windsurf", "mcp_config.json")},
		{Cline, User, s.join(vscode, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")},
	}
	p.Hosts = append(p.Hosts, newerHosts(s, goos, home, config, env)...)
	return p, nil
}

// newerHosts are the files of the hosts added in late 2026: Gemini CLI
// (~/.gemini/settings.json; project .gemini/settings.json), Codex
// ($CODEX_HOME/config.toml, default ~/.codex; project .codex/config.toml),
// Zed (~/.config/zed/settings.json on Linux and macOS, Zed/settings.json in
// the config folder on Windows; project .zed/settings.json), opencode
// (~/.config/opencode/opencode.json and .jsonc on every OS; project
// opencode.json, opencode.jsonc and .opencode/opencode.json(c)), Goose
// (~/.config/goose/config.yaml, Block\goose\config\config.yaml in the
// config folder on Windows) and LM Studio (~/.lmstudio/mcp.json).
func newerHosts(s syntax, goos, home, config string, env func(string) string) []HostConfig {
	codex := env("CODEX_HOME")
	if codex == "" {
		codex = s.join(home, ".codex")
	}
	zed := s.join(home, ".config", "zed", "settings.json")
	goose := s.join(home, ".config", "goose", "config.yaml")
	if goos == "windows" {
		zed = s.join(config, "Zed", "settings.json")
		goose = s.join(config, "Block", "goose", "config", "config.yaml")
	}
	xdg := s.join(home, ".config")
	if goos != "darwin" && goos != "windows" {
		xdg = config
		if v := env("XDG_CONFIG_HOME"); v != "" {
			zed = s.join(v, "zed", "settings.json")
			goose = s.join(v, "goose", "config.yaml")
		}
	}
	return []HostConfig{
		{Gemini, User, s.join(home, ".gemini", "settings.json")},
		{Gemini, Project, s.rel(".gemini", "settings.json")},
		{Codex, User, s.join(codex, "config.toml")},
		{Codex, Project, s.rel(".codex", "config.toml")},
		{Zed, User, zed},
		{Zed, Project, s.rel(".zed", "settings.json")},
		{Opencode, User, s.join(xdg, "opencode", "opencode.json")},
		{Opencode, User, s.join(xdg, "opencode", "opencode.jsonc")},
		{Opencode, Project, "opencode.json"},
		{Opencode, Project, "opencode.jsonc"},
		{Opencode, Project, s.rel(".opencode", "opencode.json")},
		{Opencode, Project, s.rel(".opencode", "opencode.jsonc")},
		{Goose, User, goose},
		{LMStudio, User, s.join(home, ".lmstudio", "mcp.json")},
	}
}

// Current returns the paths of the running process: For(runtime.GOOS,
// os.UserHomeDir(), os.Getenv).
func Current() (Paths, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Paths{}, fmt.Errorf("%w: %v", ErrNoHome, err)
	}
	return For(runtime.GOOS, home, os.Getenv)
}

// syntax is the path syntax of the target OS, which need not be the one
// running (tests compute Windows paths on Linux).
type syntax struct{ windows bool }

// isAbs reports whether p is absolute: "/..." on Unix; "C:\...", "C:/..."
// or a UNC path "\\server\share" (or "//server/share") on Windows.
func (s syntax) isAbs(p string) bool {
	if !s.windows {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// join appends elems to the absolute base.
func (s syntax) join(base string, elems ...string) string {
	if !s.windows {
		return path.Join(append([]string{base}, elems...)...)
	}
	// The base keeps its drive or UNC prefix, with Windows separators and
	// without a trailing one.
	b := strings.TrimRight(strings.ReplaceAll(base, "/", `\`), `\`)
	if len(b) == 2 && b[1] == ':' {
		b += `\`
		return b + strings.Join(elems, `\`)
	}
	return b + `\` + strings.Join(elems, `\`)
}

// rel joins relative elements.
func (s syntax) rel(elems ...string) string {
	if s.windows {
		return strings.Join(elems, `\`)
	}
	return path.Join(elems...)
}
