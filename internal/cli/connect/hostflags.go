package connect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/transport"
)

// registerConfig adds --config, --server and --input.
func (f *Flags) registerConfig(fs *pflag.FlagSet) {
	fs.StringVar(&f.Config, "config", "", "read servers from this host config `FILE` (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Cline, Gemini CLI, Codex, Zed, opencode, Goose, LM Studio); with --server")
	fs.Var((*serverFlag)(f), "server", "start the server `NAME` from --config FILE, or from the known host config files (see sonde config list); tools and call take it more than once (several servers at once, as with --all)")
	fs.StringArrayVar(&f.Inputs, "input", nil, "with --server (or the picker): the value of VS Code's ${input:ID}, given as `ID=VALUE` instead of asked for (repeatable; needed without a terminal when the input has no default)")
}

// InputValues returns the --input values by id (a later one for the same
// id wins). A value is never part of an error: it may be a password.
func (f *Flags) InputValues() (map[string]string, error) {
	if len(f.Inputs) == 0 {
		return nil, nil
	}
	values := map[string]string{}
	for _, kv := range f.Inputs {
		id, v, ok := strings.Cut(kv, "=")
		if !ok || id == "" {
			return nil, cmdutil.Usagef(`--input: want ID=VALUE, e.g. --input region=eu-west-1 (the id of an entry of the file's "inputs")`)
		}
		values[id] = v
	}
	return values, nil
}

// CheckInputFlag is the usage error of --input given to a server that does
// not come from a config file (a command after --, or --url).
func (f *Flags) CheckInputFlag() error {
	if len(f.Inputs) > 0 && f.Server == "" && f.Config == "" {
		return cmdutil.Usagef("--input gives values to the inputs of a config file's server: use it with --server NAME (or the picker), not with a command or --url")
	}
	return nil
}

// Hosts is where sonde looks for host config files: the known paths of
// this OS, the home folder and the project folder (the working directory).
type Hosts struct {
	Paths   paths.Paths
	Home    string
	Project string
}

// CurrentHosts is where this sonde looks for host config files.
func CurrentHosts() (Hosts, error) {
	p, err := paths.Current()
	if err != nil {
		return Hosts{}, err
	}
	home, _ := os.UserHomeDir()
	project, err := os.Getwd()
	if err != nil {
		return Hosts{}, fmt.Errorf("cannot find the working directory: %w", err)
	}
	return Hosts{Paths: p, Home: home, Project: project}, nil
}

// LoadHosts is CurrentHosts and the servers of file (Load): where this
// sonde looks, and what it found. Not finding where to look is a usage
// error.
func LoadHosts(file string) (Hosts, hostconfig.Found, error) {
	h, err := CurrentHosts()
	if err != nil {
		return Hosts{}, hostconfig.Found{}, cmdutil.Usagef(err.Error())
	}
	return h, h.Load(file), nil
}

// Load reads the servers of file (every known file when file is ""), with
// the approvals of Claude Code's project servers (their settings files'
// problems are among the problems).
func (h Hosts) Load(file string) hostconfig.Found {
	var f hostconfig.Found
	if file == "" {
		f = hostconfig.Discover(h.Paths.Hosts, h.Project)
	} else {
		host, scope := hostconfig.Detect(file, h.Paths.Hosts, h.Project)
		servers, problems := hostconfig.ReadFile(file, host, scope, h.Project)
		f = hostconfig.Found{Servers: servers, Problems: problems}
		if len(problems) != 1 || !errors.Is(problems[0].Err, hostconfig.ErrRead) {
			f.Files = []string{file}
		}
	}
	f.Problems = append(f.Problems, hostconfig.SetApprovals(f.Servers, h.Home)...)
	return f
}

// Resolve expands the references of s, with the input values given
// (--input) and asking for the others with p (nil: only check them).
func (h Hosts) Resolve(s hostconfig.Server, inputs map[string]string, p hostconfig.Prompter) (hostconfig.Server, error) {
	return s.Resolve(hostconfig.Env{Lookup: os.LookupEnv, Home: h.Home, Workspace: h.Project, Inputs: inputs, Prompter: p})
}

// resolveConfig is Resolve with --config and --server: the server comes
// from a host config file instead of "--" or --url.
func resolveConfig(cmd *cobra.Command, f *Flags, args []string, n int, wrongCount string) ([]string, *Target, error) {
	if f.URL != "" {
		return nil, nil, cmdutil.Usagef("give either --url or --server (with or without --config), not both")
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash < len(args) {
		return nil, nil, cmdutil.Usagef("give either --server or a server command after --, not both")
	}
	if len(args) != n {
		return nil, nil, cmdutil.Usagef(strings.Replace(wrongCount, "before --", "(with --server)", 1))
	}
	h, found, err := LoadHosts(f.Config)
	if err != nil {
		return nil, nil, err
	}
	if f.Server == "" {
		return nil, nil, cmdutil.Usagef(needServer(f.Config, found))
	}
	s, err := pickServer(found, f.Server, f.Config)
	if err != nil {
		return nil, nil, err
	}
	// Inputs are asked for on stderr, which stays clear of the output of
	// the headless commands; the UI (the root command) draws on stdout, so
	// it asks there.
	out := cmd.ErrOrStderr()
	if !cmd.HasParent() {
		out = cmd.OutOrStdout()
	}
	t, err := UseServer(cmd, f, h, s, TermPrompter{Ctx: cmd.Context(), In: cmd.InOrStdin(), Out: out})
	return args, t, err
}

// needServer is the usage message of --config without --server.
func needServer(file string, found hostconfig.Found) string {
	var names []string
	for _, s := range found.Servers {
		names = append(names, s.Name)
	}
	msg := "--config " + file + " needs --server NAME"
	if len(names) > 0 {
		msg += "; its servers are: " + strings.Join(names, ", ")
	}
	for _, p := range found.Problems {
		msg += "; " + p.Error()
	}
	return msg
}

// pickServer finds the server named name; when it is not there, the
// problems of the files read are part of the message (the server may be
// in a file that could not be read).
func pickServer(found hostconfig.Found, name, file string) (hostconfig.Server, error) {
	s, err := hostconfig.Find(found.Servers, name)
	if err == nil {
		return s, nil
	}
	msg := err.Error()
	if file != "" {
		msg = "--config " + file + ": " + msg
	}
	for _, p := range found.Problems {
		if p.Server == "" || p.Server == name {
			msg += "; " + p.Error()
		}
	}
	return hostconfig.Server{}, cmdutil.Usagef(msg)
}

// UseServer resolves s (with the --input values, asking for the other
// inputs with p) into the target: a stdio entry gives the argv, its env
// (before --env, which wins) and its cwd (unless --cwd); a URL entry gives
// the URL, the transport (unless --transport is given) and its headers
// (unless --header sets the same name). The values of its headers, and
// what its references brought in (hostconfig.Server.Secrets), are
// redacted from captures, as --header's are, and hidden where its command
// line is shown.
func UseServer(cmd *cobra.Command, f *Flags, h Hosts, s hostconfig.Server, p hostconfig.Prompter) (*Target, error) {
	inputs, err := f.InputValues()
	if err != nil {
		return nil, err
	}
	if err := s.CheckInputValues(inputs); err != nil {
		return nil, cmdutil.Usagef(fmt.Sprintf("%s: server %q: %v", s.File, s.Name, err))
	}
	r, err := h.Resolve(s, inputs, p)
	if err != nil {
		return nil, cmdutil.Usagef(err.Error())
	}
	t := f.Target(nil)
	t.Server = s.Name
	for i, v := range r.Secrets() {
		t.Secrets = append(t.Secrets, fmt.Sprintf("ref%d=%s", i, v))
		t.Hide = append(t.Hide, v)
	}
	if r.Transport == hostconfig.Stdio {
		var env []string
		for _, k := range r.EnvNames() {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, cmdutil.Usagef(fmt.Sprintf("%s: server %q: env name %q is not a variable name", r.File, r.Name, k))
			}
			env = append(env, k+"="+r.Env[k])
		}
		t.Env = append(env, f.Env...)
		if t.Cwd == "" {
			t.Cwd = r.Cwd
		}
		t.Argv = append([]string{r.Command}, r.Args...)
		return t, nil
	}
	t.URL = r.URL
	if !cmd.Flags().Changed("transport") {
		t.Mode = string(transportMode(r.Transport))
	}
	t.Header = http.Header{}
	for _, k := range r.HeaderNames() {
		v := r.Headers[k]
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, cmdutil.Usagef(fmt.Sprintf("%s: server %q: header %q: want a name without spaces or colons and a value on one line (value %s)", r.File, r.Name, k, transport.Redacted))
		}
		t.Header.Set(k, v)
		t.Secrets = append(t.Secrets, k+"="+v)
	}
	return t, nil
}

// transportMode maps an entry's transport to --transport.
func transportMode(t hostconfig.Transport) transport.HTTPMode {
	switch t {
	case hostconfig.Streamable:
		return transport.ModeStreamable
	case hostconfig.SSE:
		return transport.ModeSSE
	}
	return transport.ModeAuto
}

// TermPrompter asks for VS Code inputs on the terminal: the prompt on out,
// the answer read from in, which must be a terminal (else it cannot ask:
// hostconfig.ErrCannotAsk); a password is not echoed, and a pickString is
// a numbered list of its options. An interrupt (ctx ends) abandons the
// question and puts the terminal back as it was.
type TermPrompter struct {
	Ctx context.Context
	In  io.Reader
	Out io.Writer
}

// Prompt asks for one input.
func (p TermPrompter) Prompt(in hostconfig.Input) (string, error) {
	f, ok := p.In.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return "", fmt.Errorf("%w: stdin is not a terminal", hostconfig.ErrCannotAsk)
	}
	label := textfmt.Escape(in.Description)
	if label == "" {
		label = textfmt.Escape(in.ID)
	}
	if in.IsChoice() {
		return p.choose(f, in, label)
	}
	if in.Default != "" && !in.Password {
		label += " [" + textfmt.Escape(in.Default) + "]"
	}
	fmt.Fprintf(p.Out, "sonde: %s (input %s): ", label, textfmt.Escape(in.ID))
	text, err := p.read(f, in.Password)
	if in.Password && err == nil {
		fmt.Fprintln(p.Out)
	}
	return text, err
}

// choose asks for a pickString: its options numbered from 1, the default
// marked, until the answer is an option's number, value or label (or
// empty, for the default).
func (p TermPrompter) choose(f *os.File, in hostconfig.Input, label string) (string, error) {
	fmt.Fprintf(p.Out, "sonde: %s (input %s):\n", label, textfmt.Escape(in.ID))
	def := ""
	for i, o := range in.Options {
		line := fmt.Sprintf("  %d. %s", i+1, textfmt.Escape(o.Text()))
		if o.Value == in.Default {
			line += " (default)"
			def = fmt.Sprintf(" [%d]", i+1)
		}
		fmt.Fprintln(p.Out, line)
	}
	for {
		fmt.Fprintf(p.Out, "sonde: choose 1-%d%s: ", len(in.Options), def)
		text, err := p.read(f, false)
		if err != nil {
			return "", err
		}
		if v, ok := in.Choice(text); ok {
			return v, nil
		}
		fmt.Fprintf(p.Out, "sonde: %q is not one of the choices: answer with a number from 1 to %d, or an option\n", text, len(in.Options))
	}
}

// read reads one answer from the terminal f; an interrupt (ctx ends)
// abandons it.
func (p TermPrompter) read(f *os.File, password bool) (string, error) {
	state, _ := term.GetState(f.Fd())
	type answer struct {
		text string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		text, err := readAnswer(f, password)
		done <- answer{text, err}
	}()
	select {
	case a := <-done:
		return a.text, a.err
	case <-p.Ctx.Done():
		// The read goes on until sonde exits, which it is about to do.
		if state != nil {
			_ = term.Restore(f.Fd(), state)
		}
		fmt.Fprintln(p.Out)
		return "", errors.New("interrupted")
	}
}

// readAnswer reads one line from the terminal f, without echo for a
// password. A line is read one byte at a time: nothing after the newline is
// taken from what the UI reads next.
func readAnswer(f *os.File, password bool) (string, error) {
	if password {
		b, err := term.ReadPassword(f.Fd())
		return string(b), err
	}
	var line []byte
	buf := make([]byte, 1)
	for {
		n, err := f.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return strings.TrimRight(string(line), "\r"), nil
			}
			line = append(line, buf[0])
		}
		if err != nil {
			return "", fmt.Errorf("reading the answer: %w", err)
		}
	}
}

// CompleteServerNames registers, on every command of root that has
// --server, a shell completion of the server names found (with their host
// and scope as the description), from --config FILE when it is given.
func CompleteServerNames(root *cobra.Command) {
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	for _, c := range cmds {
		if c.Flags().Lookup("server") == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc("server", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			h, err := CurrentHosts()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			file, _ := cmd.Flags().GetString("config")
			var out []string
			for _, s := range h.Load(file).Servers {
				out = append(out, s.Name+"\t"+s.Where())
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// ServerLine is a server's command line or URL.
func ServerLine(s hostconfig.Server) string {
	if s.Transport == hostconfig.Stdio {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	return s.URL
}
