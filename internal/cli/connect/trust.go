package connect

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/manager"
)

// Gate is the start rule's verdict on one server of a run that did not
// name it (doctor, tools --all): whether it may start, and if not, why
// and how to let it.
type Gate struct {
	// Held: the server may not start unless it is named.
	Held bool
	// Why says, for a held server, why it is not approved.
	Why string
	// Approve is, for a held server, the command that approves it.
	Approve string
	// By is what lets a server start: "" for a server of the user's own
	// files, the host's name for the host's approval (Claude Code's
	// settings), "sonde" for the user's approval in sonde.
	By string
}

// Project reports whether s comes from a project's file: .mcp.json,
// .cursor/mcp.json or .vscode/mcp.json of the folder sonde runs in, which
// a cloned repository brings with it (the user did not write it).
func Project(s hostconfig.Server) bool { return s.Scope == paths.Project.String() }

// Unnamed is the start rule of the runs over every configured server that
// do not name them one by one (doctor, tools --all), one Gate per server
// of servers: a server of the user's own files may start; a project
// server (Project) only when its host approved it (Claude Code's
// enabledMcpjsonServers or enableAllProjectMcpServers, SetApprovals), or
// when the user approved it in sonde (sonde servers approve NAME: its
// Hash, so a change of the entry or of its executable needs a new
// approval). A server the user names (--server NAME, the picker, the
// server list) is not asked about: naming it is the approval. The error
// is an approvals file that could not be read (no sonde approval is used
// then); the gates are good either way.
func (h Hosts) Unnamed(servers []hostconfig.Server) ([]Gate, error) {
	approvals, err := manager.LoadApprovals(h.approvalsPath())
	count := map[string]int{}
	for _, s := range servers {
		count[s.Name]++
	}
	gates := make([]Gate, len(servers))
	for i, s := range servers {
		if !Project(s) {
			continue
		}
		if s.Approval == hostconfig.ApprovalEnabled {
			gates[i].By = s.Host
			continue
		}
		file := absFile(s.File)
		if a, ok := approvals.Of(file, s.Name); ok {
			if a.Hash == h.ApprovalHash(s) {
				gates[i].By = "sonde"
				continue
			}
			gates[i].Why = "it changed since it was approved (its entry or its executable)"
		}
		gates[i].Held = true
		if gates[i].Why == "" {
			gates[i].Why = heldWhy(s)
		}
		gates[i].Approve = "sonde servers approve " + s.Name
		if count[s.Name] > 1 {
			gates[i].Approve += " --config " + s.File
		}
	}
	return gates, err
}

// heldWhy says why the project server s is not approved.
func heldWhy(s hostconfig.Server) string {
	what := "a server of the project's " + filepath.Base(filepath.Dir(s.File)) + string(filepath.Separator) + filepath.Base(s.File)
	if s.Host == paths.ClaudeCode {
		what = "a server of the project's " + filepath.Base(s.File)
	}
	switch {
	case s.Host == paths.ClaudeCode && s.Approval == hostconfig.ApprovalDisabled:
		return what + ", disabled in Claude Code, and not approved in sonde"
	case s.Host == paths.ClaudeCode:
		return what + " that neither Claude Code nor sonde has approved"
	}
	if s.Host == paths.VSCode {
		return what + " that sonde has not approved (VS Code runs them only in a workspace you trust, after asking)"
	}
	return what + " that sonde has not approved"
}

// ApprovalHash is what an approval of the project server s in sonde is
// kept under: the manager's Hash of the entry resolved without inputs
// (their values are not part of it) and without asking anything (as
// written when it cannot be resolved so).
func (h Hosts) ApprovalHash(s hostconfig.Server) string {
	r, err := s.Resolve(hostconfig.Env{Lookup: os.LookupEnv, Home: h.Home, Workspace: h.Project})
	if err != nil {
		r = s
	}
	return manager.Hash(manager.FromHost(r))
}

// Approve approves the project server s in sonde: runs that do not name
// it start it from now on, while its entry and executable stay as they
// are (ApprovalHash). It returns the hash approved.
func (h Hosts) Approve(s hostconfig.Server) (string, error) {
	path := h.approvalsPath()
	if path == "" {
		return "", fmt.Errorf("no state folder to keep the approval in")
	}
	approvals, _ := manager.LoadApprovals(path) // a damaged file is rewritten
	hash := h.ApprovalHash(s)
	return hash, approvals.Approve(absFile(s.File), s.Name, hash)
}

// approvalsPath is the user's approvals file ("" without a state folder).
func (h Hosts) approvalsPath() string {
	if h.Paths.State == "" {
		return ""
	}
	return filepath.Join(h.Paths.State, manager.ApprovalsFile)
}

// absFile is file as an absolute path (a --config FILE may be relative).
func absFile(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		return abs
	}
	return file
}
