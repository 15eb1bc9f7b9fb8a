package hostconfig

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// textKind is the syntax of a host config file.
type textKind uint8

// The syntaxes of host config files.
const (
	textJSON textKind = iota // JSON, or JSONC with format.jsonc
	textTOML                 // Codex's config.toml
	textYAML                 // Goose's config.yaml
)

// errNotServer is what a format's norm returns for an entry that is not a
// server sonde can start (a Goose builtin extension): it is left out, with
// no problem.
var errNotServer = errors.New("not a server")

// newerFormat returns the format of the hosts added in late 2026.
func newerFormat(host string) (format, bool) {
	switch host {
	case paths.Gemini:
		// Gemini CLI reads settings.json with comments allowed and expands
		// $NAME and ${NAME} in its values.
		return format{keys: []string{"mcpServers"}, jsonc: true, httpType: Streamable,
			dialect: dialect{bare: true, dollar: true}, norm: normGemini}, true
	case paths.Zed:
		return format{keys: []string{"context_servers"}, jsonc: true, httpType: HTTP, norm: normZed}, true
	case paths.Opencode:
		return format{keys: []string{"mcp"}, jsonc: true, httpType: HTTP, norm: normOpencode,
			dialect: dialect{braceEnv: true}}, true
	case paths.LMStudio:
		return format{keys: []string{"mcpServers"}, httpType: HTTP}, true
	case paths.Codex:
		return format{keys: []string{"mcp_servers"}, httpType: Streamable, norm: normCodex, text: textTOML}, true
	case paths.Goose:
		return format{keys: []string{"extensions"}, httpType: Streamable, norm: normGoose, text: textYAML}, true
	}
	return format{}, false
}

// rename moves the member from to the member to (when to is not set).
func rename(m map[string]json.RawMessage, from, to string) {
	if v, ok := m[from]; ok {
		if _, set := m[to]; !set {
			m[to] = v
		}
		delete(m, from)
	}
}

// setType sets "type" to typ.
func setType(m map[string]json.RawMessage, typ string) {
	m["type"] = json.RawMessage(jsonString(typ))
}

// enabledToDisabled turns an "enabled": false into "disabled": true.
func enabledToDisabled(m map[string]json.RawMessage) {
	if raw, ok := m["enabled"]; ok {
		var on bool
		if json.Unmarshal(raw, &on) == nil && !on {
			m["disabled"] = json.RawMessage("true")
		}
		delete(m, "enabled")
	}
}

// normGemini: "httpUrl" is a Streamable HTTP server; "url" an SSE one
// unless "type" says "http" (Gemini CLI prefers httpUrl, then url, then
// command).
func normGemini(m map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if raw, ok := m["httpUrl"]; ok && string(raw) != "null" {
		m["url"] = raw
		delete(m, "command")
		setType(m, "streamable-http")
	} else if raw, ok := m["url"]; ok && string(raw) != "null" {
		delete(m, "command")
		if _, typed := m["type"]; !typed {
			setType(m, "sse")
		}
	}
	delete(m, "httpUrl")
	return m, nil
}

// normZed: "enabled": false is a disabled server; the older form's
// "command" object {"path", "args", "env"} is read as the newer fields.
func normZed(m map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	enabledToDisabled(m)
	if raw, ok := m["command"]; ok && len(raw) > 0 && raw[0] == '{' {
		var old map[string]json.RawMessage
		if err := json.Unmarshal(raw, &old); err != nil {
			return nil, fmt.Errorf("%w: \"command\" is %s, want a string", ErrShape, kindOf(raw))
		}
		delete(m, "command")
		rename(old, "path", "command")
		for k, v := range old {
			if k == "command" || k == "args" || k == "env" {
				m[k] = v
			}
		}
	}
	return m, nil
}

// normOpencode: "type" is "local" (a "command" array: the program and its
// arguments; "environment") or "remote" ("url", "headers"); "enabled":
// false (or "disabled": true) turns it off.
func normOpencode(m map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	enabledToDisabled(m)
	var typ string
	if raw, ok := m["type"]; ok && json.Unmarshal(raw, &typ) != nil {
		return nil, fmt.Errorf("%w: \"type\" is %s, want \"local\" or \"remote\"", ErrShape, kindOf(raw))
	}
	switch typ {
	case "local":
		var argv []string
		raw := m["command"]
		if err := json.Unmarshal(raw, &argv); err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("%w: \"command\" is %s, want a non-empty array of strings (the program and its arguments)", ErrShape, kindOf(raw))
		}
		m["command"] = json.RawMessage(jsonString(argv[0]))
		args, _ := json.Marshal(argv[1:])
		m["args"] = args
		rename(m, "environment", "env")
		setType(m, "stdio")
	case "remote":
		setType(m, "http")
	default:
		return nil, fmt.Errorf("%w: \"type\" %q: want \"local\" or \"remote\"", ErrShape, typ)
	}
	return m, nil
}

// opencodeServers returns where the servers of opencode's "mcp" member
// are: the member itself, or its "servers" object (the layout of
// opencode's v2 configuration), told apart by "servers" having no "type"
// (every server entry has one).
func opencodeServers(host string, raw json.RawMessage, key string) (json.RawMessage, string) {
	if host != paths.Opencode {
		return raw, key
	}
	var mcp map[string]json.RawMessage
	if json.Unmarshal(raw, &mcp) != nil {
		return raw, key
	}
	inner, ok := mcp["servers"]
	if !ok {
		return raw, key
	}
	var servers map[string]json.RawMessage
	if json.Unmarshal(inner, &servers) != nil {
		return raw, key
	}
	if _, typed := servers["type"]; typed {
		return raw, key
	}
	return inner, key + ".servers"
}

// normCodex: Codex's [mcp_servers.NAME] tables: "command", "args", "env",
// "cwd", or "url" (Streamable HTTP) with "http_headers"; "enabled" = false
// turns one off.
func normCodex(m map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	enabledToDisabled(m)
	rename(m, "http_headers", "headers")
	if raw, ok := m["url"]; ok && string(raw) != "null" {
		setType(m, "streamable-http")
	}
	return m, nil
}

// normGoose: Goose's extensions: "type" stdio ("cmd", "args", "envs"),
// sse or streamable_http ("uri", "headers"); builtin and platform
// extensions run inside Goose and are not servers sonde can start.
func normGoose(m map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	enabledToDisabled(m)
	var typ string
	if raw, ok := m["type"]; ok && json.Unmarshal(raw, &typ) != nil {
		return nil, fmt.Errorf("%w: \"type\" is %s, want a string", ErrShape, kindOf(raw))
	}
	switch typ {
	case "builtin", "platform", "frontend", "inline_python":
		return nil, errNotServer
	case "stdio":
		rename(m, "cmd", "command")
		rename(m, "envs", "env")
	case "sse", "streamable_http":
		rename(m, "uri", "url")
	default:
		return nil, fmt.Errorf("%w: \"type\" %q: want stdio, sse or streamable_http", ErrShape, typ)
	}
	for _, k := range []string{"name", "description", "bundled", "timeout", "env_keys", "available_tools", "display_name"} {
		delete(m, k)
	}
	return m, nil
}
