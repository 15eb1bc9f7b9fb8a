// Package doctor is `sonde doctor`: every server of the hosts' config
// files checked step by step, in parallel, each stopping at its first
// failure with the cause in plain words and what to do about it.
package doctor

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Options are the flags of `sonde doctor`.
type Options struct {
	Config  string   // --config: only this file
	Servers []string // --server: only these names
	Hosts   []string // --host: only these hosts
	Inputs  []string // --input ID=VALUE
	Jobs    int
	Timeout time.Duration
	JSON    bool
	OTLP    connect.OTLPFlags // --otlp-endpoint, --otlp-header, --traceparent
}

// NewCmdDoctor is `sonde doctor`.
func NewCmdDoctor(env *cmdutil.Env) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "doctor [--config FILE] [--server NAME]... [--host NAME]... [--json]",
		Short: "Check every configured server, step by step, and say why one does not connect",
		Long: `Check every MCP server of the hosts' config files (the servers sonde config list
shows), or only those of --config FILE, --server NAME and --host NAME, several at a time
(--jobs). Each server goes through an ordered checklist that stops at the first failure,
with the cause in plain words and a hint of what to do.

A command (stdio): its config references resolve (variables, inputs); the command is found
on the PATH the server gets (and for npx, uvx, node and python, the runtime answers
--version); it spawns; it writes nothing but JSON-RPC on stdout before the handshake; its
stderr before the handshake (shown); initialize answered; the protocol version; its
capabilities; tools/list (all pages); each tool's inputSchema and outputSchema a valid
JSON Schema of type object; ping; the protocol rules of sonde lint over the session; a clean
shutdown (it exits when its stdin closes, and leaves no process of its own running).

A URL: DNS, TCP connect, TLS (certificate problems named), the initialize POST (HTTP
status, content type, session header; on 401 what authorization discovery found and what
to do next; the fallback to legacy SSE), the protocol version, tools/list and the tool
schemas, ping.

A server of a project's file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json: a cloned
repository brings them) is started only when its host approved it (Claude Code's
enabledMcpjsonServers or enableAllProjectMcpServers), when you approved it in sonde (sonde
servers approve NAME, which holds while its entry and executable stay the same), or when you
name it (--server NAME). The others are listed as not approved, with the command that
approves them, and are not started; they do not fail the run, but a run that checks no
server exits 1.

Each step may take --timeout. On a terminal tall enough, stderr shows one line per server
with its current step while it runs; then a table: server, host, result, failing step,
time, and under it each failure's cause and hint. --json prints one object per server (one
a line) with every step: name, ok, ms, detail, hint. A config file that cannot be read or
is not valid JSON is listed after the servers (with --json, as {"file", "ok": false,
"problem"}).

With --otlp-endpoint (or $OTEL_EXPORTER_OTLP_ENDPOINT), each server's session is sent to an
OpenTelemetry collector as the other commands send theirs (docs/otel.md); --otlp-content is
not taken here.

The exit status is 0 when every server passes, 1 when one fails or a file has a problem,
2 for a usage error (a bad flag, no server found).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd.Context(), env, &o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Config, "config", "", "check only the servers of this host config `FILE`")
	fs.StringArrayVar(&o.Servers, "server", nil, "check only the server `NAME` (repeatable)")
	fs.StringArrayVar(&o.Hosts, "host", nil, "check only the servers of host `NAME` as sonde config list shows it, e.g. \"VS Code\" or vscode (repeatable)")
	fs.StringArrayVar(&o.Inputs, "input", nil, "the value of VS Code's ${input:ID}, given as `ID=VALUE` (repeatable); an input without one takes its default, or fails its server's config step")
	fs.IntVar(&o.Jobs, "jobs", 4, "servers checked at the same time")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Second, "the longest each step may take")
	fs.BoolVar(&o.JSON, "json", false, "one JSON object per server, with every step")
	o.OTLP.Register(fs)
	return cmd
}

// Step is one check of one server.
type Step struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	MS     float64 `json:"ms"`
	Detail string  `json:"detail"`
	Hint   string  `json:"hint,omitempty"`
}

// Result is one server's checklist.
type Result struct {
	Server    string `json:"server"`
	Host      string `json:"host"`
	Scope     string `json:"scope"`
	File      string `json:"file"`
	Transport string `json:"transport"`
	// Disabled: the host has the entry turned off (it is checked anyway).
	Disabled bool `json:"disabled,omitempty"`
	// NotApproved: a project server that nobody approved (connect's
	// Unnamed), not started and so not checked; Why says why, Approve is
	// the command that approves it.
	NotApproved bool    `json:"not_approved,omitempty"`
	Why         string  `json:"why,omitempty"`
	Approve     string  `json:"approve,omitempty"`
	OK          bool    `json:"ok"`
	Failed      string  `json:"failed,omitempty"` // the failing step
	MS          float64 `json:"ms"`
	Steps       []Step  `json:"steps"`
}

// failure is the failing step, nil when all passed.
func (r *Result) failure() *Step {
	for i := range r.Steps {
		if !r.Steps[i].OK {
			return &r.Steps[i]
		}
	}
	return nil
}

// run checks the servers found and reports.
func run(ctx context.Context, env *cmdutil.Env, o *Options) error {
	if o.Jobs < 1 {
		return cmdutil.Usagef("--jobs must be at least 1")
	}
	if o.Timeout <= 0 {
		return cmdutil.Usagef("--timeout must be positive")
	}
	inputs, err := (&connect.Flags{Inputs: o.Inputs}).InputValues()
	if err != nil {
		return err
	}
	h, found, err := connect.LoadHosts(o.Config)
	if err != nil {
		return err
	}
	servers, err := pick(found, o)
	if err != nil {
		return err
	}
	held, err := hold(h, servers, o)
	if err != nil {
		fmt.Fprintln(env.Err, "sonde: warning: "+err.Error())
	}
	if o.OTLP.Content {
		// The servers' env and header values are in their configs, not
		// in a redactor doctor has: their content is not sent.
		return cmdutil.Usagef("--otlp-content is not taken by doctor")
	}
	tel, err := connect.StartTelemetry(ctx, &o.OTLP, "sonde", nil)
	if err != nil {
		return err
	}
	defer tel.Close(env.Err)
	c := checker{hosts: h, inputs: inputs, timeout: o.Timeout, problems: found.Problems, tel: tel}
	results, todo := planChecks(servers, held)
	c.checkAll(ctx, env, o, servers, results, todo)
	return report(ctx, env, o, found, results, len(todo))
}

// planChecks are the results with those of the servers held filled in
// (not approved, not checked), and the indexes of the servers to check.
func planChecks(servers []hostconfig.Server, held []connect.Gate) (results []Result, todo []int) {
	results = make([]Result, len(servers))
	for i, s := range servers {
		if g := held[i]; g.Held {
			results[i] = Result{Server: s.Name, Host: s.Host, Scope: s.Scope, File: s.File, Transport: string(s.Transport),
				Disabled: s.Disabled, NotApproved: true, Why: g.Why, Approve: g.Approve, Steps: []Step{}}
			continue
		}
		todo = append(todo, i)
	}
	return results, todo
}

// checkAll checks the servers of todo, --jobs at a time, into results,
// with a progress display on a terminal that fits it.
func (c *checker) checkAll(ctx context.Context, env *cmdutil.Env, o *Options, servers []hostconfig.Server, results []Result, todo []int) {
	var checked []hostconfig.Server
	for _, i := range todo {
		checked = append(checked, servers[i])
	}
	var prog *progress
	if !o.JSON && len(todo) > 0 {
		if w := env.ErrTerminal(); w != nil && fits(w, len(todo)) {
			prog = newProgress(w, checked)
		}
	}
	sem := make(chan struct{}, o.Jobs)
	var wg sync.WaitGroup
	for k, i := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			at := func(step string) {
				if prog != nil {
					prog.set(k, step)
				}
			}
			results[i] = c.check(ctx, servers[i], at)
			if prog != nil {
				prog.done(k, &results[i])
			}
		}()
	}
	wg.Wait()
	if prog != nil {
		prog.stop()
	}
}

// report writes the results and the files with problems (JSON lines, or
// the summary), and is the exit status: n servers were checked.
func report(ctx context.Context, env *cmdutil.Env, o *Options, found hostconfig.Found, results []Result, n int) error {
	failed, notApproved := 0, 0
	for _, r := range results {
		switch {
		case r.NotApproved:
			notApproved++
		case !r.OK:
			failed++
		}
	}
	files := fileProblems(found.Problems)
	if o.JSON {
		for _, r := range results {
			cmdutil.WriteJSON(env.Out, r)
		}
		for _, p := range files {
			cmdutil.WriteJSON(env.Out, p)
		}
	} else {
		printSummary(env.Out, results)
		if len(files) > 0 {
			fmt.Fprintf(env.Out, "\nFiles with problems (their servers are not checked):\n")
			for _, p := range files {
				fmt.Fprintf(env.Out, "  %s\n", textfmt.Escape(p.Problem))
			}
		}
	}
	if ctx.Err() != nil {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "interrupted"}
	}
	if failed > 0 {
		return &cmdutil.ExitStatus{Code: 1, Msg: fmt.Sprintf("doctor: %d of %d servers failed", failed, n)}
	}
	if n == 0 {
		// Nothing was checked: not a pass.
		return &cmdutil.ExitStatus{Code: 1, Msg: fmt.Sprintf("doctor: no server checked: %d not approved (sonde servers approve NAME, or name it with --server)", notApproved)}
	}
	if len(files) > 0 {
		msg := fmt.Sprintf("doctor: %d config files have problems", len(files))
		if len(files) == 1 {
			msg = "doctor: a config file has a problem"
		}
		return &cmdutil.ExitStatus{Code: 1, Msg: msg}
	}
	return nil
}

// FileProblem is a problem of a whole config file (not valid JSON, the
// wrong shape, unreadable): the servers it lists are not checked.
type FileProblem struct {
	File    string `json:"file"`
	OK      bool   `json:"ok"` // always false
	Problem string `json:"problem"`
}

// fileProblems are the problems of whole files among problems.
func fileProblems(problems []hostconfig.Problem) []FileProblem {
	var out []FileProblem
	for _, p := range problems {
		if p.Server == "" {
			out = append(out, FileProblem{File: p.File, Problem: p.Error()})
		}
	}
	return out
}

// hold is the start rule over the servers to check (connect's Unnamed):
// with --server, the user named each of them, and none is held.
func hold(h connect.Hosts, servers []hostconfig.Server, o *Options) ([]connect.Gate, error) {
	if len(o.Servers) > 0 {
		return make([]connect.Gate, len(servers)), nil
	}
	return h.Unnamed(servers)
}

// fits reports whether n progress lines fit on the terminal w: lines
// redrawn with the cursor moving up cannot scroll out of sight.
func fits(w io.Writer, n int) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, h, err := term.GetSize(f.Fd())
	return err == nil && n < h
}

// pick narrows the servers found to --server and --host; none left is a
// usage error that says what there is.
func pick(found hostconfig.Found, o *Options) ([]hostconfig.Server, error) {
	var out []hostconfig.Server
	names := map[string]bool{}
	for _, s := range found.Servers {
		if len(o.Servers) > 0 && !contains(o.Servers, s.Name) {
			continue
		}
		if len(o.Hosts) > 0 && !matchHost(o.Hosts, s.Host) {
			continue
		}
		names[s.Name] = true
		out = append(out, s)
	}
	for _, n := range o.Servers {
		if !names[n] {
			return nil, cmdutil.Usagef(fmt.Sprintf("--server %s: no such server in the files read (see sonde config list)", textfmt.Escape(n)))
		}
	}
	if len(out) == 0 {
		msg := "no servers found in the hosts' config files (see sonde config list)"
		if o.Config != "" {
			msg = "no servers found in " + o.Config
		}
		for _, p := range found.Problems {
			msg += "; " + p.Error()
		}
		return nil, cmdutil.Usagef(msg)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// matchHost compares host names without case, spaces and dashes: "VS
// Code", "vscode" and "vs-code" are the same host.
func matchHost(hosts []string, host string) bool {
	norm := func(s string) string {
		return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
	}
	for _, h := range hosts {
		if known, ok := hostconfig.HostByName(h); norm(h) == norm(host) || ok && known == host {
			return true
		}
	}
	return false
}

// printSummary is the table of results, then each failure's cause and hint.
func printSummary(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tHOST\tRESULT\tFAILING STEP\tTIME")
	for _, r := range results {
		res, step, took := "ok", "-", textfmt.Dur(msDur(r.MS))
		if f := r.failure(); f != nil {
			res, step = "FAIL", f.Name
		}
		if r.NotApproved {
			res, took = "not approved", "-"
		}
		host := r.Host
		if r.Disabled {
			host += " (disabled there)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", textfmt.Escape(r.Server), host, res, step, took)
	}
	_ = tw.Flush()
	for _, r := range results {
		if r.NotApproved {
			fmt.Fprintf(w, "\n%s (%s · %s, %s): not approved: %s; sonde starts a project's server only when its host or you approved it, or when you name it (sonde doctor --server %s)\n",
				textfmt.Escape(r.Server), r.Host, r.Scope, r.File, textfmt.CleanBlock(r.Why), textfmt.Escape(r.Server))
			fmt.Fprintf(w, "  hint: approve it with %s\n", textfmt.CleanBlock(r.Approve))
			continue
		}
		f := r.failure()
		if f == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s, %s): %s failed: %s\n", textfmt.Escape(r.Server), r.Host, r.File, f.Name, textfmt.CleanBlock(f.Detail))
		if f.Hint != "" {
			fmt.Fprintf(w, "  hint: %s\n", textfmt.CleanBlock(f.Hint))
		}
	}
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
