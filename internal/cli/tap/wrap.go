package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// WrapOptions are the flags of `sonde wrap` and `sonde unwrap`.
type WrapOptions struct {
	Config  string
	Host    string
	Servers []string
	All     bool
	DryRun  bool
	// Sonde is the command a wrapped entry launches; "" is this sonde
	// (os.Executable, or the sonde on the PATH when it is the same file).
	Sonde string
	// TapFlags are sonde tap's flags, for reading an entry's
	// (hostconfig.WrapOptions.TapFlags); nil: those of NewCmdTap.
	TapFlags map[string]bool
}

const wrapHelpCommon = `Which entries: --server NAME (repeatable) or --all, in --config FILE, or in the files of
--host NAME (claude-desktop, claude-code, cursor, vscode, windsurf, cline, gemini, codex,
zed, opencode, lmstudio: the user's file
and this folder's project file), or else in every host config file sonde knows (sonde
config list shows them). A name found in the files of several hosts needs --host or --config.

The file is edited as text: only the "command" value and the start of the "args" array
change, so comments (VS Code and Cursor read JSONC), key order and layout are kept. Before
a file is written, a copy is made next to it: FILE.sonde-backup, or, when that exists,
FILE.sonde-backup-TIME (a backup is never overwritten, and is written whole, synced and
read back before the file is touched); the file keeps its mode, owner and group (sudo sonde
wrap leaves it its user's), and is replaced at once (a host never reads half of it). A file
that is read-only (mode 0444) or that this user may not write is refused before anything is
written (CONFIG_READ_ONLY; chmod u+w FILE if you do want it edited), and so is a file that
changed while sonde was editing it (CONFIG_CHANGED). A write that fails (a full disk:
CONFIG_WRITE, CONFIG_BACKUP) leaves the folder as it was. --dry-run prints the change and
writes nothing. Quit the host before, or restart it after: a host reads its config when it
starts (and Claude Code rewrites ~/.claude.json while it runs).

Exit status: 0 when every entry asked for is as wanted (changed, or already so); 2 for a
usage error, a file that cannot be read, parsed or written (sonde: CODE: FILE: ...; nothing
was written), or an entry asked for by name that cannot be changed.`

// NewCmdWrap is `sonde wrap`.
func NewCmdWrap(env *cmdutil.Env) *cobra.Command {
	var o WrapOptions
	cmd := &cobra.Command{
		Use:   "wrap [--config FILE | --host NAME] (--server NAME | --all) [--dry-run]",
		Short: "Make a host launch its stdio servers through sonde tap (edits the host's config file)",
		Long: `sonde wrap rewrites stdio entries of an MCP host's config file so that the host launches
sonde tap in front of the server: the entry's "command" becomes sonde's absolute path, and
"tap", "--wrapped-by-sonde", "--label", NAME, "--" and the original command go in front of
its "args":

  "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]
becomes
  "command": "/usr/local/bin/sonde",
  "args": ["tap", "--wrapped-by-sonde", "--label", "github", "--", "npx", "-y", "@modelcontextprotocol/server-github"]

(an entry without "args" gets "args": ["tap", "--wrapped-by-sonde", "--label=NAME", "--",
COMMAND], so that unwrap removes it again). --wrapped-by-sonde is the mark by which sonde
unwrap --all knows the entries sonde wrap wrote; sonde tap accepts it and does nothing else
with it. The server's env, cwd and the rest of the entry are untouched. Every session the host
starts is then recorded in the sessions folder (sonde sessions lists them; see sonde tap
--help). An entry that launches sonde tap already (by hand too) is left as it is. sonde unwrap
gives back the original entries, byte for byte.

An entry of a server over HTTP (a URL) is not edited: sonde prints the sonde tap --listen
command that would proxy it, and the URL to put in the entry instead; that is not automated.

  sonde wrap --host claude-desktop --server github
  sonde wrap --config .vscode/mcp.json --all --dry-run

` + wrapHelpCommon,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.TapFlags = tapFlags(cmd, env)
			return RunWrap(env, &o, false)
		},
	}
	o.register(cmd)
	return cmd
}

// NewCmdUnwrap is `sonde unwrap`.
func NewCmdUnwrap(env *cmdutil.Env) *cobra.Command {
	var o WrapOptions
	cmd := &cobra.Command{
		Use:   "unwrap [--config FILE | --host NAME] (--server NAME | --all) [--dry-run]",
		Short: "Give back the host config entries sonde wrap changed",
		Long: `sonde unwrap undoes sonde wrap: an entry whose command is sonde and whose args start with
"tap" gets back, as its command and args, what follows the "--" that ends the tap's flags
(found by reading the flags in order with their values, so a server named "--" is no
trouble); the tap's flags are dropped, and the "args" that sonde wrap added to an entry that
had none is removed. After sonde wrap, the file is the same, byte for byte, as before it. An
entry that does not launch sonde tap is left as it is.

--all unwraps only the entries sonde wrap wrote, those with --wrapped-by-sonde after "tap":
an entry you pointed at sonde tap by hand is left as it is, and so is one that a sonde older
than the mark wrapped; sonde names each and the command that unwraps it, --server NAME,
which unwraps an entry whether or not it has the mark.

  sonde unwrap --host claude-desktop --server github
  sonde unwrap --all --dry-run

` + wrapHelpCommon,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.TapFlags = tapFlags(cmd, env)
			return RunWrap(env, &o, true)
		},
	}
	o.register(cmd)
	return cmd
}

// tapFlags are the flags sonde tap takes, by name as written ("--record",
// "-h"), true for one that takes a value: those of the tap command beside
// cmd (with the root's persistent flags), or of a new one (cmd nil).
func tapFlags(cmd *cobra.Command, env *cmdutil.Env) map[string]bool {
	tc := NewCmdTap(env)
	if cmd != nil {
		if found, _, err := cmd.Root().Find([]string{"tap"}); err == nil && found != cmd.Root() && found.Name() == "tap" {
			tc = found
		}
	}
	tc.InitDefaultHelpFlag()
	out := map[string]bool{}
	add := func(f *pflag.Flag) {
		takes := f.NoOptDefVal == ""
		out["--"+f.Name] = takes
		if f.Shorthand != "" {
			out["-"+f.Shorthand] = takes
		}
	}
	tc.Flags().VisitAll(add)
	tc.InheritedFlags().VisitAll(add)
	return out
}

func (o *WrapOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Config, "config", "", "edit this host config `FILE` (its host is told by its path and name, as with sonde --config)")
	f.StringVar(&o.Host, "host", "", "edit the files of host `NAME`: claude-desktop, claude-code, cursor, vscode, windsurf, cline, gemini, codex, zed, opencode, goose or lmstudio")
	f.StringArrayVar(&o.Servers, "server", nil, "the entry `NAME` (repeatable)")
	f.BoolVar(&o.All, "all", false, "every stdio entry of the files")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the change, write nothing")
	f.StringVar(&o.Sonde, "sonde", "", "the sonde `PATH` the host launches (default: this sonde's absolute path)")
}

// wrapTarget is one host config file to edit.
type wrapTarget struct {
	path  string
	host  string
	scope paths.Scope
}

// RunWrap is sonde wrap (unwrap false) or sonde unwrap.
func RunWrap(env *cmdutil.Env, o *WrapOptions, unwrap bool) error {
	verb := "wrap"
	if unwrap {
		verb = "unwrap"
	}
	if err := validateWrap(o, verb); err != nil {
		return err
	}
	sonde, err := wrapSonde(o)
	if err != nil {
		return err
	}
	h, err := connect.CurrentHosts()
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	targets, err := wrapTargets(h, o)
	if err != nil {
		return err
	}
	files, where, err := loadWrapFiles(env, o, h, targets)
	if err != nil {
		return err
	}
	if err := checkWrapServers(o, where); err != nil {
		return err
	}
	edits, err := planWrap(env, o, unwrap, sonde, h.Project, files, where)
	if err != nil {
		return err
	}
	// Every file to be replaced is checked before any is written: one that
	// may not be replaced (read-only, another owner) stops the run with
	// nothing written.
	if !o.DryRun {
		if err := checkWrapEdits(edits, verb); err != nil {
			return err
		}
	}
	failed, changedAny, err := applyWrap(env, o, unwrap, edits)
	if err != nil {
		return err
	}
	return reportWrap(env, o, unwrap, changedAny, failed)
}

// validateWrap checks the flags of sonde wrap or unwrap (verb).
func validateWrap(o *WrapOptions, verb string) error {
	switch {
	case o.All && len(o.Servers) > 0:
		return cmdutil.Usagef("give either --server NAME or --all, not both")
	case !o.All && len(o.Servers) == 0:
		return cmdutil.Usagef(verb + " needs --server NAME or --all (see sonde " + verb + " --help)")
	case o.Config != "" && o.Host != "":
		return cmdutil.Usagef("give either --config FILE or --host NAME, not both")
	}
	for _, n := range o.Servers {
		if n == "" {
			return cmdutil.Usagef("--server: want a name")
		}
	}
	return nil
}

// wrapSonde is the absolute path of the sonde a wrapped entry runs:
// --sonde, or this executable's own path.
func wrapSonde(o *WrapOptions) (string, error) {
	sonde := o.Sonde
	if sonde == "" {
		var err error
		if sonde, err = selfPath(); err != nil {
			return "", cmdutil.Usagef("cannot find sonde's own path (give it with --sonde PATH): " + err.Error())
		}
	} else if !filepath.IsAbs(sonde) {
		return "", cmdutil.Usagef(fmt.Sprintf("--sonde %q: want an absolute path (a host may not see your PATH)", sonde))
	}
	return sonde, nil
}

// wrapLoaded is one host config file read and parsed.
type wrapLoaded struct {
	wrapTarget
	b       []byte
	servers []hostconfig.Server
}

// wrapEdit is one file's planned change.
type wrapEdit struct {
	wrapLoaded
	out     []byte
	changes []hostconfig.WrapChange
	cf      configFile
}

// loadWrapFiles reads and parses the target files, skipping (with a note)
// the ones that are missing or broken unless --config named one, and
// says which files have each server name.
func loadWrapFiles(env *cmdutil.Env, o *WrapOptions, h connect.Hosts, targets []wrapTarget) ([]wrapLoaded, map[string][]string, error) {
	var files []wrapLoaded
	where := map[string][]string{} // server name → the files that have it
	for _, t := range targets {
		b, err := os.ReadFile(t.path)
		if errors.Is(err, fs.ErrNotExist) && o.Config == "" {
			continue
		}
		if err != nil {
			return nil, nil, cmdutil.Usagef(fmt.Sprintf("%s: %v", t.path, unwrapPathErr(err)))
		}
		servers, problems := hostconfig.Parse(b, t.path, t.host, t.scope, h.Project)
		if bad := fileProblem(problems); bad != nil {
			if o.Config != "" {
				return nil, nil, cmdutil.Usagef(bad.Error())
			}
			fmt.Fprintf(env.Err, "sonde: skipping %s\n", textfmt.Escape(bad.Error()))
			continue
		}
		files = append(files, wrapLoaded{t, b, servers})
		for _, s := range servers {
			where[s.Name] = append(where[s.Name], t.path)
		}
		for _, p := range problems {
			if p.Server != "" {
				where[p.Server] = append(where[p.Server], t.path)
			}
		}
	}
	return files, where, nil
}

// checkWrapServers refuses a --server name found in no file, or in more
// than one.
func checkWrapServers(o *WrapOptions, where map[string][]string) error {
	for _, n := range o.Servers {
		switch in := dedupe(where[n]); len(in) {
		case 0:
			var names []string
			for name := range where {
				names = append(names, name)
			}
			sort.Strings(names)
			msg := fmt.Sprintf("no server %q", n)
			if len(names) > 0 {
				msg += "; the servers are: " + strings.Join(names, ", ")
			}
			return cmdutil.Usagef(msg)
		case 1:
		default:
			return cmdutil.Usagef(fmt.Sprintf("server %q is in %s; choose one with --config FILE or --host NAME", n, strings.Join(in, " and ")))
		}
	}
	return nil
}

// planWrap computes each file's edit, keeping the files with changes.
func planWrap(env *cmdutil.Env, o *WrapOptions, unwrap bool, sonde, project string, files []wrapLoaded, where map[string][]string) ([]wrapEdit, error) {
	flags := o.TapFlags
	if flags == nil {
		flags = tapFlags(nil, env)
	}
	var edits []wrapEdit
	for _, f := range files {
		ho := hostconfig.WrapOptions{Sonde: sonde, All: o.All, Project: project, TapFlags: flags}
		if !o.All {
			for _, n := range o.Servers {
				if len(where[n]) > 0 && where[n][0] == f.path {
					ho.Servers = append(ho.Servers, n)
				}
			}
			if len(ho.Servers) == 0 {
				continue
			}
		}
		fn := hostconfig.Wrap
		if unwrap {
			fn = hostconfig.Unwrap
		}
		out, changes, err := fn(f.b, f.host, f.scope, ho)
		if err != nil {
			if o.Config != "" || !o.All {
				return nil, cmdutil.Usagef(fmt.Sprintf("%s: %v", f.path, err))
			}
			fmt.Fprintf(env.Err, "sonde: skipping %s: %s\n", f.path, textfmt.Escape(err.Error()))
			continue
		}
		if len(changes) > 0 {
			edits = append(edits, wrapEdit{wrapLoaded: f, out: out, changes: changes})
		}
	}
	return edits, nil
}

// checkWrapEdits checks that every file to be replaced may be, recording
// what writing it needs.
func checkWrapEdits(edits []wrapEdit, verb string) error {
	for i, e := range edits {
		if bytes.Equal(e.out, e.b) {
			continue
		}
		cf, err := checkConfig(e.path, verb)
		if err != nil {
			return cmdutil.Usagef(err.Error())
		}
		edits[i].cf = cf
	}
	return nil
}

// applyWrap prints each edit and, unless a dry run, writes it with a
// backup; failed is true when an entry named with --server could not be
// changed.
func applyWrap(env *cmdutil.Env, o *WrapOptions, unwrap bool, edits []wrapEdit) (failed, changedAny bool, err error) {
	for _, f := range edits {
		fmt.Fprintf(env.Out, "%s (%s · %s)\n", f.path, f.host, f.scope)
		for _, c := range f.changes {
			if printChange(env.Out, c, f.path, o.DryRun, unwrap) && !o.All {
				failed = true
			}
		}
		if bytes.Equal(f.out, f.b) {
			continue
		}
		changedAny = true
		if o.DryRun {
			continue
		}
		backup, err := writeConfig(f.cf, f.b, f.out)
		if err != nil {
			return failed, changedAny, cmdutil.Usagef(err.Error())
		}
		fmt.Fprintf(env.Out, "  backup: %s\n", backup)
	}
	return failed, changedAny, nil
}

// reportWrap prints what to do next and the run's exit status.
func reportWrap(env *cmdutil.Env, o *WrapOptions, unwrap, changedAny, failed bool) error {
	switch {
	case o.DryRun:
		fmt.Fprintln(env.Out, "Dry run: nothing was written.")
	case changedAny && !unwrap:
		dir := "the sessions folder"
		if p, err := paths.Current(); err == nil {
			dir = p.Sessions
		}
		fmt.Fprintf(env.Out, "Restart the host: its wrapped servers' sessions then go to %s (sonde sessions lists them).\n", dir)
	case changedAny:
		fmt.Fprintln(env.Out, "Restart the host: it launches the servers directly again.")
	default:
		fmt.Fprintln(env.Out, "Nothing to change.")
	}
	if failed {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "some entries could not be changed (see above)"}
	}
	return nil
}

// printChange prints what happened to one entry; true when it could not
// be changed.
func printChange(w io.Writer, c hostconfig.WrapChange, file string, dry, unwrap bool) bool {
	name := textfmt.Escape(fmt.Sprintf("%q", c.Server))
	if c.Project != "" {
		name += " (project " + textfmt.Escape(c.Project) + ")"
	}
	switch c.State {
	case hostconfig.Wrapped, hostconfig.Unwrapped:
		state := string(c.State)
		if dry {
			state = "would be " + state
		}
		fmt.Fprintf(w, "  server %s: %s (line %d)\n", name, state, c.Line)
		for _, l := range c.Before {
			fmt.Fprintf(w, "    - %s\n", diffLine(l))
		}
		for _, l := range c.After {
			fmt.Fprintf(w, "    + %s\n", diffLine(l))
		}
	case hostconfig.AlreadyWrapped, hostconfig.NotWrapped:
		fmt.Fprintf(w, "  server %s: %s, left as it is\n", name, c.State)
	case hostconfig.NotMarked:
		fmt.Fprintf(w, "  server %s: launches sonde tap but has no %s marker (written by hand, or by an older sonde): left as it is; to unwrap it: sonde unwrap --config %s --server %s\n",
			name, hostconfig.WrapMarker, textfmt.Escape(shellQuote(file)), textfmt.Escape(shellQuote(c.Server)))
	case hostconfig.URLEntry:
		u := textfmt.Escape(c.URL)
		if unwrap {
			fmt.Fprintf(w, "  server %s: a URL entry (%s), nothing to unwrap\n", name, u)
			break
		}
		fmt.Fprintf(w, "  server %s: a URL entry (%s), not edited. Tapping HTTP is not automated: run\n"+
			"      sonde tap --listen 127.0.0.1:PORT --target %s --label %s\n"+
			"    and put the address it serves in the entry's url instead.\n", name, u, shellQuote(u), shellQuote(textfmt.Escape(c.Server)))
	case hostconfig.Skipped:
		fmt.Fprintf(w, "  server %s: not changed: %s\n", name, textfmt.Escape(c.Err.Error()))
		return true
	}
	return false
}

// diffLine is a line of the file as printed: tabs as four spaces, control
// characters escaped.
func diffLine(l string) string {
	return textfmt.Escape(strings.ReplaceAll(l, "\t", "    "))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fileProblem returns the problem of the whole file, if any.
func fileProblem(problems []hostconfig.Problem) *hostconfig.Problem {
	for i := range problems {
		if problems[i].Server == "" {
			return &problems[i]
		}
	}
	return nil
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// wrapTargets are the files to edit: --config FILE, the files of --host
// NAME, or every known file.
func wrapTargets(h connect.Hosts, o *WrapOptions) ([]wrapTarget, error) {
	if o.Config != "" {
		host, scope := hostconfig.Detect(o.Config, h.Paths.Hosts, h.Project)
		return []wrapTarget{{o.Config, host, scope}}, nil
	}
	host := ""
	if o.Host != "" {
		var ok bool
		if host, ok = hostconfig.HostByName(o.Host); !ok {
			return nil, cmdutil.Usagef(fmt.Sprintf("--host %q: want one of %s", o.Host, strings.Join(hostconfig.HostFlags(), ", ")))
		}
	}
	var out []wrapTarget
	seen := map[string]bool{}
	for _, hc := range h.Paths.Hosts {
		if host != "" && hc.Host != host {
			continue
		}
		p := hc.Path
		if hc.Scope == paths.Project {
			p = filepath.Join(h.Project, p)
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, wrapTarget{p, hc.Host, hc.Scope})
	}
	return out, nil
}

// selfPath is this sonde's absolute path: the sonde found on the PATH
// when it is this very file (a stable name, where os.Executable may give
// a versioned one), else os.Executable.
func selfPath() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if p, err := exec.LookPath("sonde"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			a, err1 := os.Stat(abs)
			b, err2 := os.Stat(exe)
			if err1 == nil && err2 == nil && os.SameFile(a, b) {
				return abs, nil
			}
		}
	}
	return filepath.Abs(exe)
}
