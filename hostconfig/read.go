package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// format is how one host writes its file.
type format struct {
	keys       []string // the member(s) holding the servers
	jsonc      bool     // comments and trailing commas allowed
	inputs     bool     // an "inputs" list (VS Code)
	claudeUser bool     // ~/.claude.json: a "projects" map too
	httpType   Transport
	dialect    dialect
	// norm, when set, turns one of the host's entries into the fields
	// parseEntry reads (command, args, env, cwd, url, headers, type,
	// disabled): the newer hosts name them their own way.
	norm func(m map[string]json.RawMessage) (map[string]json.RawMessage, error)
	// text is the syntax of a file that is not JSON (TOML, YAML).
	text textKind
}

// formatOf returns the format of host's files.
func formatOf(host string, scope paths.Scope) format {
	switch host {
	case paths.ClaudeDesktop:
		return format{keys: []string{"mcpServers"}, httpType: HTTP}
	case paths.ClaudeCode:
		return format{keys: []string{"mcpServers"}, claudeUser: scope == paths.User,
			httpType: Streamable, dialect: dialect{bare: true}}
	case paths.Cursor:
		return format{keys: []string{"mcpServers"}, jsonc: true, httpType: HTTP,
			dialect: dialect{envColon: true, editor: true}}
	case paths.VSCode:
		return format{keys: []string{"servers"}, jsonc: true, inputs: true, httpType: HTTP,
			dialect: dialect{envColon: true, editor: true, input: true}}
	case paths.Windsurf:
		return format{keys: []string{"mcpServers"}, httpType: HTTP, dialect: dialect{envColon: true}}
	case paths.Cline:
		return format{keys: []string{"mcpServers"}, httpType: Streamable}
	}
	if f, ok := newerFormat(host); ok {
		return f
	}
	return format{keys: []string{"mcpServers", "servers"}, jsonc: true, inputs: true, httpType: HTTP,
		dialect: dialect{envColon: true, editor: true, input: true, bare: true}}
}

// ReadFile reads one host config file. host is one of the paths host names
// (or HostFile for a file of unknown origin, read with every format's
// rules) and scope its scope; project is the project folder whose
// local-scope Claude Code entries are read from ~/.claude.json. A file that
// does not exist is a Problem wrapping fs.ErrNotExist.
func ReadFile(file, host string, scope paths.Scope, project string) ([]Server, []Problem) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, []Problem{{File: file, Err: fmt.Errorf("%w: %w", ErrRead, unwrapPath(err))}}
	}
	return Parse(b, file, host, scope, project)
}

// unwrapPath drops the path from an *os.PathError (the Problem names the
// file already).
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Parse reads the servers of one file's contents b; see ReadFile.
func Parse(b []byte, file, host string, scope paths.Scope, project string) ([]Server, []Problem) {
	f := formatOf(host, scope)
	if f.text != textJSON {
		return parseText(b, file, host, scope, f)
	}
	top, err := decodeObject(b, f.jsonc)
	if err != nil {
		return nil, []Problem{{File: file, Err: err}}
	}
	base := Server{Host: host, Scope: scope.String(), File: file, dialect: f.dialect}
	if host == HostFile {
		base.Scope = "file"
	}
	var servers []Server
	var problems []Problem
	if f.inputs {
		if raw, ok := top["inputs"]; ok {
			in, err := parseInputs(raw)
			if err != nil {
				problems = append(problems, Problem{File: file, Err: err})
			}
			base.inputs = in
		}
	}
	for _, key := range f.keys {
		if raw, ok := top[key]; ok {
			raw, key = opencodeServers(host, raw, key)
			s, p := parseServers(raw, key, base, f)
			servers, problems = append(servers, s...), append(problems, p...)
		}
	}
	if f.claudeUser {
		s, p := parseProjects(top["projects"], project, base, f)
		servers, problems = append(servers, s...), append(problems, p...)
	}
	return servers, problems
}

// parseProjects reads the local-scope servers of ~/.claude.json: those of
// the entry of "projects" for project, or for its nearest parent folder
// that has one.
func parseProjects(raw json.RawMessage, project string, base Server, f format) ([]Server, []Problem) {
	if raw == nil || project == "" {
		return nil, nil
	}
	var projects map[string]json.RawMessage
	if err := json.Unmarshal(raw, &projects); err != nil {
		return nil, []Problem{{File: base.File, Err: fmt.Errorf("%w: \"projects\" is %s, want an object", ErrShape, kindOf(raw))}}
	}
	for dir := filepath.Clean(project); ; {
		if entry, ok := projects[dir]; ok {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(entry, &p); err != nil {
				return nil, []Problem{{File: base.File, Err: fmt.Errorf("%w: \"projects\" entry %q is %s, want an object", ErrShape, dir, kindOf(entry))}}
			}
			local := base
			local.Scope, local.Project = ScopeLocal, dir
			if s, ok := p["mcpServers"]; ok {
				return parseServers(s, `projects["`+dir+`"].mcpServers`, local, f)
			}
			return nil, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}

// parseServers reads one object of named server entries, in file order.
func parseServers(raw json.RawMessage, key string, base Server, f format) ([]Server, []Problem) {
	members, err := orderedMembers(raw)
	if err != nil {
		return nil, []Problem{{File: base.File, Err: fmt.Errorf("%w: %q is %s, want an object of servers", ErrShape, key, kindOf(raw))}}
	}
	var servers []Server
	var problems []Problem
	for _, m := range members {
		if m.name == "" {
			problems = append(problems, Problem{File: base.File, Err: fmt.Errorf("%w: %q has a server with an empty name", ErrShape, key)})
			continue
		}
		s, err := parseEntry(m.name, m.value, base, f)
		if errors.Is(err, errNotServer) {
			continue
		}
		if err != nil {
			problems = append(problems, Problem{File: base.File, Server: m.name, Err: err})
			continue
		}
		servers = append(servers, s)
	}
	return servers, problems
}

type member struct {
	name  string
	value json.RawMessage
}

// orderedMembers returns the members of a JSON object in file order.
func orderedMembers(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{name: t.(string), value: v})
	}
	return out, nil
}

// parseEntry reads one server entry.
func parseEntry(name string, raw json.RawMessage, base Server, f format) (Server, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Server{}, fmt.Errorf("%w: the entry is %s, want an object", ErrShape, kindOf(raw))
	}
	if f.norm != nil {
		var err error
		if m, err = f.norm(m); err != nil {
			return Server{}, err
		}
	}
	s := base
	s.Name = name
	var errs fieldErrors
	typ := errs.str(m, "type")
	if typ == "" {
		typ = errs.str(m, "transportType") // older Cline files
	}
	s.Command = errs.str(m, "command")
	s.Args = errs.strs(m, "args")
	s.Env = errs.strMap(m, "env")
	s.EnvFile = errs.str(m, "envFile")
	s.Cwd = errs.str(m, "cwd")
	s.URL = errs.str(m, "url")
	if s.URL == "" {
		s.URL = errs.str(m, "serverUrl") // Windsurf
	}
	s.Headers = errs.strMap(m, "headers")
	s.Disabled = errs.boolean(m, "disabled")
	if len(errs) > 0 {
		return Server{}, errs
	}
	switch strings.ToLower(typ) {
	case "":
		switch {
		case s.Command != "" && s.URL != "":
			return Server{}, fmt.Errorf("%w: both \"command\" and a URL: give one", ErrShape)
		case s.Command != "":
			s.Transport = Stdio
		case s.URL != "":
			s.Transport = HTTP
		default:
			return Server{}, fmt.Errorf("%w: no \"command\" and no \"url\"", ErrShape)
		}
	case "stdio":
		s.Transport = Stdio
	case "http":
		s.Transport = f.httpType
	case "streamable-http", "streamablehttp", "streamable_http":
		s.Transport = Streamable
	case "sse":
		s.Transport = SSE
	default:
		return Server{}, fmt.Errorf("%w: \"type\" %q: want stdio, http, streamable-http or sse", ErrShape, typ)
	}
	if s.Transport == Stdio && s.Command == "" {
		return Server{}, fmt.Errorf("%w: a stdio server needs a \"command\"", ErrShape)
	}
	if s.Transport != Stdio && s.URL == "" {
		return Server{}, fmt.Errorf("%w: \"type\" %q needs a \"url\"", ErrShape, typ)
	}
	return s, nil
}

// fieldErrors collects the fields of an entry that have the wrong type.
type fieldErrors []string

func (e fieldErrors) Error() string {
	return fmt.Sprintf("%v: %s", ErrShape, strings.Join(e, "; "))
}

func (e fieldErrors) Unwrap() error { return ErrShape }

func (e *fieldErrors) wrong(key string, raw json.RawMessage, want string) {
	*e = append(*e, fmt.Sprintf("%q is %s, want %s", key, kindOf(raw), want))
}

func (e *fieldErrors) str(m map[string]json.RawMessage, key string) string {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		e.wrong(key, raw, "a string")
	}
	return s
}

func (e *fieldErrors) strs(m map[string]json.RawMessage, key string) []string {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	var s []string
	if json.Unmarshal(raw, &s) != nil {
		e.wrong(key, raw, "an array of strings")
	}
	return s
}

func (e *fieldErrors) strMap(m map[string]json.RawMessage, key string) map[string]string {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	var s map[string]string
	if json.Unmarshal(raw, &s) != nil {
		e.wrong(key, raw, "an object of strings")
	}
	return s
}

func (e *fieldErrors) boolean(m map[string]json.RawMessage, key string) bool {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		e.wrong(key, raw, "a boolean")
	}
	return b
}
