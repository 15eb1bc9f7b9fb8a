package capfile

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/clients"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/sessions"
)

// ClientsOptions are the flags of `sonde clients`.
type ClientsOptions struct {
	JSON     bool
	Markdown bool
}

// clientsWidth is the width the table fits.
const clientsWidth = 80

// NewCmdClients is `sonde clients [SESSION|FILE...]`.
func NewCmdClients(env *cmdutil.Env) *cobra.Command {
	var o ClientsOptions
	cmd := &cobra.Command{
		Use:   "clients [SESSION|FILE...]",
		Short: "How each host behaves, from tapped sessions: revision, opening, capabilities, caching, tracing, progress, parallel calls, retries",
		Long: `Read the sessions sonde tap recorded (every session of the sessions folder, or the session
ids, prefixes or capture files named) and print one column per host and version (the
clientInfo it sent) with a row per behaviour:

  sessions         how many sessions of it were read
  revision         the protocol revisions it asked for
  opens with       its first request: initialize or server/discover (and a fallback)
  capabilities     the client capabilities it declared
  re-fetch in TTL  lists (or resources) asked for again while the last result's ttlMs ran
  trace context    requests with a traceparent in _meta
  progress tokens  requests with a progressToken in _meta
  parallel calls   the most of its requests in flight at once
  retries          the same call (method, tool, arguments) sent again under a new id after
                   the host cancelled it or while it was unanswered: side effects run twice

How each is measured, and its source in the spec: docs/clients.md.

  sonde clients
  sonde clients claude-20261203 gemini-20261203
  sonde clients --markdown > hosts.md

--json prints one object, {"hosts": [...]}, with the counts behind each cell and the
re-fetches and retries one by one. --markdown prints the table as GitHub Markdown.

Exit status: 0; 2 when a file named cannot be read as a capture (a session of the
folder that cannot be read is skipped, with a warning).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClients(env, &o, args)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	cmd.Flags().BoolVar(&o.Markdown, "markdown", false, "the table as GitHub Markdown")
	return cmd
}

// clientSource is one capture to read: where, named how, and the host's
// process name as the tap saw it.
type clientSource struct {
	path, name, process string
	named               bool // named on the command line: an error if unreadable
}

// runClients folds the captures of args (none: the sessions folder) and
// prints their hosts.
func runClients(env *cmdutil.Env, o *ClientsOptions, args []string) error {
	if o.JSON && o.Markdown {
		return cmdutil.Usagef("--json and --markdown cannot be used together")
	}
	srcs, err := clientSources(env, args)
	if err != nil {
		return err
	}
	var all []clients.Session
	for _, src := range srcs {
		f := clients.New()
		_, warnings, err := eachEvent(src.path, nil, f.Apply)
		if err != nil {
			if src.named {
				return err
			}
			fmt.Fprintf(env.Err, "sonde: session %s skipped: %v\n", src.name, err)
			continue
		}
		warnCapture(env, src.path, warnings)
		for _, s := range f.Sessions() {
			s.Source = src.name
			if s.Host == "" && s.Version == "" && src.process != "" {
				s.Host = "(process " + src.process + ")"
			}
			all = append(all, s)
		}
	}
	hosts := clients.Merge(all)
	switch {
	case o.JSON:
		cmdutil.WriteJSON(env.Out, struct {
			Hosts []clients.Host `json:"hosts"`
		}{hosts})
		return nil
	case o.Markdown:
		return clients.WriteMarkdown(env.Out, hosts)
	}
	return clients.WriteText(env.Out, hosts, clientsWidth)
}

// clientSources are the captures named (resolved as every capture command
// does), or without any every session of the sessions folder that can be
// read as one.
func clientSources(env *cmdutil.Env, args []string) ([]clientSource, error) {
	var out []clientSource
	for _, a := range args {
		path, err := cmdutil.CaptureArg(a)
		if err != nil {
			return nil, err
		}
		tapped := sessions.ReadTapped(path, false) // its id, and the host's process name
		out = append(out, clientSource{path: path, name: tapped.ID, process: tapped.HostName, named: true})
	}
	if len(args) > 0 {
		return out, nil
	}
	dir, err := sessions.Dir()
	if err != nil {
		return nil, cmdutil.Usagef("no sessions folder: " + err.Error())
	}
	list, err := sessions.ListTapped(dir)
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if s.Problem != "" {
			fmt.Fprintf(env.Err, "sonde: session %s skipped: %s\n", s.ID, s.Problem)
			continue
		}
		out = append(out, clientSource{path: s.File, name: s.ID, process: s.HostName})
	}
	return out, nil
}
