package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// Found is what Discover read.
type Found struct {
	Servers  []Server
	Problems []Problem
	// Files are the files that exist and were read (with or without
	// problems), in the order of the hosts.
	Files []string
}

// Discover reads every host config file of hosts (paths.For's Hosts);
// project-scope files are looked up in the folder project. Files that do
// not exist are skipped; a file that is both a user and a project file
// (project is the home folder) is read once, as the user file.
func Discover(hosts []paths.HostConfig, project string) Found {
	var f Found
	seen := map[string]bool{}
	for _, h := range hosts {
		file := h.Path
		if h.Scope == paths.Project {
			if project == "" {
				continue
			}
			file = filepath.Join(project, h.Path)
		}
		if seen[file] {
			continue
		}
		seen[file] = true
		servers, problems := ReadFile(file, h.Host, h.Scope, project)
		if len(problems) == 1 && errors.Is(problems[0].Err, fs.ErrNotExist) {
			continue
		}
		f.Files = append(f.Files, file)
		f.Servers = append(f.Servers, servers...)
		f.Problems = append(f.Problems, problems...)
	}
	return f
}

// Detect says which host a file given with --config belongs to: the host
// of the known file at that path, else the one its name and folder say
// (claude_desktop_config.json, .claude.json, .mcp.json, .cursor/mcp.json,
// .vscode/mcp.json, Code/User/mcp.json, mcp_config.json,
// cline_mcp_settings.json, .gemini/settings.json, .codex/config.toml or any
// .toml file, zed/settings.json, .zed/settings.json, opencode.json(c),
// goose/config.yaml, .lmstudio/mcp.json), else HostFile.
func Detect(file string, hosts []paths.HostConfig, project string) (string, paths.Scope) {
	abs, _ := filepath.Abs(file)
	for _, h := range hosts {
		p := h.Path
		if h.Scope == paths.Project {
			p = filepath.Join(project, h.Path)
		}
		if p == abs {
			return h.Host, h.Scope
		}
	}
	base, dir := filepath.Base(abs), filepath.Base(filepath.Dir(abs))
	switch {
	case base == "claude_desktop_config.json":
		return paths.ClaudeDesktop, paths.User
	case base == ".claude.json":
		return paths.ClaudeCode, paths.User
	case base == ".mcp.json":
		return paths.ClaudeCode, paths.Project
	case base == "mcp.json" && dir == ".cursor":
		return paths.Cursor, paths.Project
	case base == "mcp.json" && dir == ".vscode":
		return paths.VSCode, paths.Project
	case base == "mcp.json" && dir == "User":
		return paths.VSCode, paths.User
	case base == "mcp_config.json":
		return paths.Windsurf, paths.User
	case base == "cline_mcp_settings.json":
		return paths.Cline, paths.User
	case base == "settings.json" && dir == ".gemini":
		return paths.Gemini, scopeByHome(abs, ".gemini")
	case base == "config.toml" && dir == ".codex":
		return paths.Codex, scopeByHome(abs, ".codex")
	case base == "settings.json" && (dir == "zed" || dir == "Zed"):
		return paths.Zed, paths.User
	case base == "settings.json" && dir == ".zed":
		return paths.Zed, paths.Project
	case base == "opencode.json" || base == "opencode.jsonc":
		return paths.Opencode, paths.Project
	case base == "config.yaml" && dir == "goose":
		return paths.Goose, paths.User
	case base == "mcp.json" && dir == ".lmstudio":
		return paths.LMStudio, paths.User
	case filepath.Ext(base) == ".toml":
		return paths.Codex, paths.User
	}
	return HostFile, paths.User
}

// scopeByHome is the scope of a file in folder dir (".gemini", ".codex"):
// the user's when that folder is in the home folder, else a project's.
func scopeByHome(abs, dir string) paths.Scope {
	if home, err := os.UserHomeDir(); err == nil && filepath.Join(home, dir) == filepath.Dir(abs) {
		return paths.User
	}
	return paths.Project
}

// Find returns the server named name. No such server is ErrNotFound (the
// message lists the names there are); several are ErrAmbiguous (the
// message lists each with its host, scope and file), except when they are
// all Claude Code's: then the one Claude Code uses wins (local over
// project over user).
func Find(servers []Server, name string) (Server, error) {
	var hits []Server
	for _, s := range servers {
		if s.Name == name {
			hits = append(hits, s)
		}
	}
	if s, ok := claudeCodeFirst(hits); ok {
		if err := unapprovedShadow(s, hits); err != nil {
			return Server{}, err
		}
		return s, nil
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		var names []string
		seen := map[string]bool{}
		for _, s := range servers {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
		if len(names) == 0 {
			return Server{}, fmt.Errorf("%w %q: no servers were found", ErrNotFound, name)
		}
		return Server{}, fmt.Errorf("%w %q; the servers are: %s", ErrNotFound, name, strings.Join(names, ", "))
	}
	var where []string
	for _, s := range hits {
		w := s.Where() + " in " + s.File
		if s.Project != "" {
			w += " (project " + s.Project + ")"
		}
		where = append(where, w)
	}
	return Server{}, fmt.Errorf("%w %q: it is in %s; choose one with --config FILE", ErrAmbiguous, name, strings.Join(where, "; "))
}

// unapprovedShadow refuses a project server (.mcp.json, from a checkout
// that may not be trusted) that Claude Code has not approved and that
// would take the place of the user's server of the same name: Claude Code
// asks before it uses such an entry, so starting it silently would run an
// untrusted command under a name the user trusts. An approved project
// server is used, as Claude Code does.
func unapprovedShadow(chosen Server, hits []Server) error {
	if chosen.Scope != "project" || chosen.Approval == ApprovalEnabled {
		return nil
	}
	why := chosen.Approval.Text()
	if why == "" {
		why = ApprovalPending.Text()
	}
	for _, s := range hits {
		if s.Scope == "user" {
			return fmt.Errorf("%w %q: the project's server in %s (%s) would shadow yours in %s; approve it in Claude Code, or choose one with --config FILE",
				ErrAmbiguous, chosen.Name, chosen.File, why, s.File)
		}
	}
	return nil
}

// claudeCodeFirst returns, when every hit is a Claude Code entry, the one
// Claude Code itself uses: local scope first, then project, then user.
func claudeCodeFirst(hits []Server) (Server, bool) {
	if len(hits) < 2 {
		return Server{}, false
	}
	rank := map[string]int{ScopeLocal: 0, "project": 1, "user": 2}
	best := -1
	for i, s := range hits {
		if s.Host != paths.ClaudeCode {
			return Server{}, false
		}
		if best < 0 || rank[s.Scope] < rank[hits[best].Scope] {
			best = i
		}
	}
	return hits[best], true
}
