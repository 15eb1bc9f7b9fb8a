package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// Approval is whether Claude Code uses a project server of .mcp.json. It
// asks the user before it starts one, and keeps the answer in its
// settings files (ClaudeSettingsFiles). sonde shows it, and the runs over
// every server (doctor, tools --all) start a project server only when it
// is enabled, or approved in sonde; a server the user names starts
// whatever its approval.
type Approval string

// The approvals of a .mcp.json server.
const (
	// ApprovalEnabled: approved, by name (enabledMcpjsonServers) or with
	// every project server (enableAllProjectMcpServers).
	ApprovalEnabled Approval = "enabled"
	// ApprovalDisabled: rejected (disabledMcpjsonServers), which wins over
	// an approval.
	ApprovalDisabled Approval = "disabled"
	// ApprovalPending: in none of the lists; Claude Code asks before using
	// it.
	ApprovalPending Approval = "pending"
)

// Text says the approval in words, e.g. "not yet approved in Claude Code".
func (a Approval) Text() string {
	switch a {
	case ApprovalEnabled:
		return "enabled in Claude Code"
	case ApprovalDisabled:
		return "disabled in Claude Code"
	case ApprovalPending:
		return "not yet approved in Claude Code"
	}
	return ""
}

// The keys of Claude Code's settings that approve .mcp.json servers.
const (
	keyEnabled   = "enabledMcpjsonServers"
	keyDisabled  = "disabledMcpjsonServers"
	keyEnableAll = "enableAllProjectMcpServers"
)

// ClaudeSettingsFiles returns the settings files in which Claude Code keeps
// the approvals of the servers of project/.mcp.json, from the lowest
// precedence to the highest: the user's ~/.claude/settings.json, the
// project's .claude/settings.json (shared) and .claude/settings.local.json
// (the user's, for this project). The user file is left out when home is
// "".
func ClaudeSettingsFiles(home, project string) []string {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	return append(files,
		filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(project, ".claude", "settings.local.json"))
}

// ClaudeApprovals are the approval keys of Claude Code's settings files,
// merged as Claude Code merges them: the lists of every file add up, and
// enableAllProjectMcpServers is the value of the file of highest
// precedence that sets it.
type ClaudeApprovals struct {
	enabled, disabled map[string]bool
	enableAll         bool
	// Files are the settings files that exist and were used.
	Files []string
}

// ReadClaudeApprovals reads the approval keys of files, given from the
// lowest precedence to the highest (ClaudeSettingsFiles). A file that does
// not exist, or is empty, is skipped. A file that cannot be read, is not
// valid JSON (Claude Code reads strict JSON), or whose approval keys have
// the wrong type is a Problem naming it and the reason, and is not used:
// Claude Code ignores an invalid settings file.
func ReadClaudeApprovals(files []string) (ClaudeApprovals, []Problem) {
	a := ClaudeApprovals{enabled: map[string]bool{}, disabled: map[string]bool{}}
	var problems []Problem
	for _, file := range files {
		b, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, Problem{File: file, Err: fmt.Errorf("%w: %w", ErrRead, unwrapPath(err))})
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		top, err := decodeObject(b, false)
		if err != nil {
			problems = append(problems, Problem{File: file, Err: err})
			continue
		}
		var errs fieldErrors
		enabled := errs.strs(top, keyEnabled)
		disabled := errs.strs(top, keyDisabled)
		all, setsAll := top[keyEnableAll]
		enableAll := errs.boolean(top, keyEnableAll)
		if len(errs) > 0 {
			problems = append(problems, Problem{File: file, Err: fmt.Errorf("%w (the file is not used, as Claude Code ignores it)", errs)})
			continue
		}
		for _, n := range enabled {
			a.enabled[n] = true
		}
		for _, n := range disabled {
			a.disabled[n] = true
		}
		if setsAll && string(all) != "null" {
			a.enableAll = enableAll
		}
		a.Files = append(a.Files, file)
	}
	return a, problems
}

// Of returns the approval of the .mcp.json server named name: disabled
// when a file rejects it, else enabled when one approves it (or every
// project server), else pending.
func (a ClaudeApprovals) Of(name string) Approval {
	switch {
	case a.disabled[name]:
		return ApprovalDisabled
	case a.enabled[name] || a.enableAll:
		return ApprovalEnabled
	}
	return ApprovalPending
}

// SetApprovals sets the Approval of every Claude Code project server
// (.mcp.json) of servers, from the settings of the folder its file is in
// (the project; home is the user's home folder, "" for none). The problems
// returned are those of the settings files read, each once; they never
// drop a server.
func SetApprovals(servers []Server, home string) []Problem {
	byProject := map[string]ClaudeApprovals{}
	var problems []Problem
	for i := range servers {
		s := &servers[i]
		if s.Host != paths.ClaudeCode || s.Scope != paths.Project.String() {
			continue
		}
		project := filepath.Dir(s.File)
		a, ok := byProject[project]
		if !ok {
			var p []Problem
			a, p = ReadClaudeApprovals(ClaudeSettingsFiles(home, project))
			byProject[project] = a
			problems = append(problems, p...)
		}
		s.Approval = a.Of(s.Name)
	}
	return dedupProblems(problems)
}

// dedupProblems drops the repeats of a problem (the user's settings file
// is read for every project).
func dedupProblems(problems []Problem) []Problem {
	seen := map[string]bool{}
	out := problems[:0]
	for _, p := range problems {
		key := p.Error()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out
}
