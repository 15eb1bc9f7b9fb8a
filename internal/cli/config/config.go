// Package config is `sonde config`: the servers of the MCP hosts' config
// files.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// NewCmdConfig is `sonde config` and its subcommand list.
func NewCmdConfig(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The servers listed in the config files of MCP hosts",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdConfigList(env))
	return cmd
}

// ListOptions are the flags of `sonde config list`.
type ListOptions struct {
	Config string // --config: only this file
	JSON   bool
}

// NewCmdConfigList is `sonde config list`.
func NewCmdConfigList(env *cmdutil.Env) *cobra.Command {
	var o ListOptions
	cmd := &cobra.Command{
		Use:   "list [--config FILE] [--json]",
		Short: "List the servers found in host config files, and the problems",
		Long: `List every MCP server found in the config files of Claude Desktop, Claude Code (the
user's ~/.claude.json with its entry for this folder, and ./.mcp.json), Cursor
(~/.cursor/mcp.json and ./.cursor/mcp.json), VS Code (the user's mcp.json and
./.vscode/mcp.json), Windsurf and Cline, or only those of --config FILE: its name, host,
scope, transport and command or URL, then every file looked at, then the problems (a file
that cannot be read or is not valid JSON, an entry of the wrong shape, a variable reference
that cannot be resolved), each with its file and reason. Env and header values, and input
values, are never printed; control characters are shown escaped. The exit status is 0 even
when there are problems.

A server of a project's .mcp.json is marked enabled, disabled or not yet approved in Claude
Code, from Claude Code's settings (enabledMcpjsonServers, disabledMcpjsonServers and
enableAllProjectMcpServers in ~/.claude/settings.json and the project's
.claude/settings.json and .claude/settings.local.json); sonde starts it in every case.

Start one with: sonde --server NAME (or sonde call/tools/check ... --server NAME), giving
VS Code inputs with --input ID=VALUE when there is no terminal to ask on.
See docs/config-import.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runList(env, &o)
		},
	}
	cmd.Flags().StringVar(&o.Config, "config", "", "list only the servers of this `FILE`")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	return cmd
}

// runList lists the servers found.
func runList(env *cmdutil.Env, o *ListOptions) error {
	h, err := connect.CurrentHosts()
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	l := listConfig(h, o.Config)
	if o.JSON {
		cmdutil.WriteJSON(env.Out, l)
		return nil
	}
	l.print(env.Out)
	return nil
}

// configList is the output of config list (and its JSON form).
type configList struct {
	Servers  []listedServer  `json:"servers"`
	Files    []listedFile    `json:"files"`
	Problems []listedProblem `json:"problems"`
}

type listedServer struct {
	hostconfig.Server
	Env     []string `json:"env,omitempty"`     // names only
	Headers []string `json:"headers,omitempty"` // names only
}

type listedFile struct {
	Path    string `json:"path"`
	Host    string `json:"host"`
	Scope   string `json:"scope"`
	State   string `json:"state"` // "read", "invalid" (see the problems), "missing" or "unreadable"
	Servers int    `json:"servers"`
}

type listedProblem struct {
	File    string `json:"file"`
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

// listConfig reads the host files (or file) and checks that every
// server's references resolve (inputs are not asked for).
func listConfig(h connect.Hosts, file string) configList {
	var targets []paths.HostConfig
	if file != "" {
		host, scope := hostconfig.Detect(file, h.Paths.Hosts, h.Project)
		targets = []paths.HostConfig{{Host: host, Scope: scope, Path: file}}
	} else {
		for _, hc := range h.Paths.Hosts {
			if hc.Scope == paths.Project {
				hc.Path = filepath.Join(h.Project, hc.Path)
			}
			targets = append(targets, hc)
		}
	}
	l := configList{Servers: []listedServer{}, Files: []listedFile{}, Problems: []listedProblem{}}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.Path] {
			continue
		}
		seen[t.Path] = true
		servers, problems := hostconfig.ReadFile(t.Path, t.Host, t.Scope, h.Project)
		lf := listedFile{Path: t.Path, Host: t.Host, Scope: t.Scope.String(), State: "read", Servers: len(servers)}
		if len(problems) == 1 && errors.Is(problems[0].Err, hostconfig.ErrRead) {
			lf.State = "unreadable"
			if errors.Is(problems[0].Err, fs.ErrNotExist) {
				lf.State = "missing"
				if file == "" {
					problems = nil
				}
			}
		}
		for _, p := range problems {
			if p.Server == "" && lf.State == "read" {
				lf.State = "invalid"
			}
		}
		l.Files = append(l.Files, lf)
		// Claude Code's approvals of .mcp.json servers: the problems of
		// its settings files are listed, but the server file stays "read".
		problems = append(problems, hostconfig.SetApprovals(servers, h.Home)...)
		for _, s := range servers {
			l.Servers = append(l.Servers, listedServer{Server: s, Env: s.EnvNames(), Headers: s.HeaderNames()})
			if _, err := h.Resolve(s, nil, nil); err != nil {
				problems = append(problems, *asProblem(err, s))
			}
		}
		for _, p := range problems {
			l.Problems = append(l.Problems, listedProblem{File: p.File, Server: p.Server, Message: p.Error()})
		}
	}
	return l
}

func asProblem(err error, s hostconfig.Server) *hostconfig.Problem {
	var p *hostconfig.Problem
	if errors.As(err, &p) {
		return p
	}
	return &hostconfig.Problem{File: s.File, Server: s.Name, Err: err}
}

func (l configList) print(w io.Writer) {
	if len(l.Servers) == 0 {
		fmt.Fprintln(w, "No servers found.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tHOST\tSCOPE\tTRANSPORT\tCOMMAND / URL")
		for _, s := range l.Servers {
			line := textfmt.Escape(connect.ServerLine(s.Server))
			if s.Disabled {
				line += "  (disabled in " + s.Host + ")"
			}
			if s.Approval != "" {
				line += "  (" + s.Approval.Text() + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textfmt.Escape(s.Name), s.Host, s.Scope, s.Transport, line)
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Files:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range l.Files {
		state := f.State
		if state == "read" {
			state = fmt.Sprintf("%d servers", f.Servers)
			if f.Servers == 1 {
				state = "1 server"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s · %s\t%s\n", f.Path, f.Host, f.Scope, state)
	}
	_ = tw.Flush()
	if len(l.Problems) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "Problems (%d):\n", len(l.Problems))
		for _, p := range l.Problems {
			fmt.Fprintln(w, "  "+textfmt.Escape(p.Message))
		}
	}
}
