package cli

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
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/transport"
)

// registerConfig adds --config, --server and --input.
func (f *serverFlags) registerConfig(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "read servers from this host config `FILE` (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Cline); with --server")
	fs.StringVar(&f.server, "server", "", "start the server `NAME` from --config FILE, or from the known host config files (see sonde config list)")
	fs.StringArrayVar(&f.inputs, "input", nil, "with --server (or the picker): the value of VS Code's ${input:ID}, given as `ID=VALUE` instead of asked for (repeatable; needed without a terminal when the input has no default)")
}

// inputValues returns the --input values by id (a later one for the same
// id wins). A value is never part of an error: it may be a password.
func (f *serverFlags) inputValues() (map[string]string, error) {
	if len(f.inputs) == 0 {
		return nil, nil
	}
	values := map[string]string{}
	for _, kv := range f.inputs {
		id, v, ok := strings.Cut(kv, "=")
		if !ok || id == "" {
			return nil, usagef(`--input: want ID=VALUE, e.g. --input region=eu-west-1 (the id of an entry of the file's "inputs")`)
		}
		values[id] = v
	}
	return values, nil
}

// checkInputFlag is the usage error of --input given to a server that does
// not come from a config file (a command after --, or --url).
func (f *serverFlags) checkInputFlag() error {
	if len(f.inputs) > 0 && f.server == "" && f.config == "" {
		return usagef("--input gives values to the inputs of a config file's server: use it with --server NAME (or the picker), not with a command or --url")
	}
	return nil
}

// hostEnv is where sonde looks for host config files: the known paths of
// this OS and the project folder (the working directory).
type hostEnv struct {
	paths   paths.Paths
	home    string
	project string
}

func currentHostEnv() (hostEnv, error) {
	p, err := paths.Current()
	if err != nil {
		return hostEnv{}, err
	}
	home, _ := os.UserHomeDir()
	project, err := os.Getwd()
	if err != nil {
		return hostEnv{}, fmt.Errorf("cannot find the working directory: %w", err)
	}
	return hostEnv{paths: p, home: home, project: project}, nil
}

// load reads the servers of file (every known file when file is ""), with
// the approvals of Claude Code's project servers (their settings files'
// problems are among the problems).
func (h hostEnv) load(file string) hostconfig.Found {
	var f hostconfig.Found
	if file == "" {
		f = hostconfig.Discover(h.paths.Hosts, h.project)
	} else {
		host, scope := hostconfig.Detect(file, h.paths.Hosts, h.project)
		servers, problems := hostconfig.ReadFile(file, host, scope, h.project)
		f = hostconfig.Found{Servers: servers, Problems: problems}
		if len(problems) != 1 || !errors.Is(problems[0].Err, hostconfig.ErrRead) {
			f.Files = []string{file}
		}
	}
	f.Problems = append(f.Problems, hostconfig.SetApprovals(f.Servers, h.home)...)
	return f
}

// resolve expands the references of s, with the input values given
// (--input) and asking for the others with p (nil: only check them).
func (h hostEnv) resolve(s hostconfig.Server, inputs map[string]string, p hostconfig.Prompter) (hostconfig.Server, error) {
	return s.Resolve(hostconfig.Env{Lookup: os.LookupEnv, Home: h.home, Workspace: h.project, Inputs: inputs, Prompter: p})
}

// configArgv is serverArgv with --config and --server: the server comes
// from a host config file instead of "--" or --url.
func (f *serverFlags) configArgv(cmd *cobra.Command, args []string, n int, wrongCount string) ([]string, []string, error) {
	if f.url != "" {
		return nil, nil, usagef("give either --url or --server (with or without --config), not both")
	}
	if dash := cmd.ArgsLenAtDash(); dash >= 0 && dash < len(args) {
		return nil, nil, usagef("give either --server or a server command after --, not both")
	}
	if len(args) != n {
		return nil, nil, usagef(strings.Replace(wrongCount, "before --", "(with --server)", 1))
	}
	h, err := currentHostEnv()
	if err != nil {
		return nil, nil, usagef(err.Error())
	}
	found := h.load(f.config)
	if f.server == "" {
		return nil, nil, usagef(needServer(f.config, found))
	}
	s, err := pickServer(found, f.server, f.config)
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
	argv, err := f.useServer(cmd, h, s, termPrompter{ctx: cmd.Context(), in: cmd.InOrStdin(), out: out})
	return args, argv, err
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
	return hostconfig.Server{}, usagef(msg)
}

// useServer resolves s (with the --input values, asking for the other
// inputs with p) and sets the flags from it: a stdio entry gives the argv
// returned, its env (before --env, which wins) and its cwd (unless --cwd);
// a URL entry gives --url, --transport (unless given) and its headers
// (unless --header sets the same name). The values of its headers and of
// its password inputs are redacted from captures, as --header's are.
func (f *serverFlags) useServer(cmd *cobra.Command, h hostEnv, s hostconfig.Server, p hostconfig.Prompter) ([]string, error) {
	inputs, err := f.inputValues()
	if err != nil {
		return nil, err
	}
	if err := s.CheckInputValues(inputs); err != nil {
		return nil, usagef(fmt.Sprintf("%s: server %q: %v", s.File, s.Name, err))
	}
	r, err := h.resolve(s, inputs, p)
	if err != nil {
		return nil, usagef(err.Error())
	}
	for i, v := range r.Secrets() {
		f.secrets = append(f.secrets, fmt.Sprintf("input%d=%s", i, v))
		f.hide = append(f.hide, v)
	}
	if r.Transport == hostconfig.Stdio {
		var env []string
		for _, k := range r.EnvNames() {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return nil, usagef(fmt.Sprintf("%s: server %q: env name %q is not a variable name", r.File, r.Name, k))
			}
			env = append(env, k+"="+r.Env[k])
		}
		f.env = append(env, f.env...)
		if f.cwd == "" {
			f.cwd = r.Cwd
		}
		return append([]string{r.Command}, r.Args...), nil
	}
	f.url = r.URL
	if !cmd.Flags().Changed("transport") {
		f.mode = string(transportMode(r.Transport))
	}
	f.header = http.Header{}
	for _, k := range r.HeaderNames() {
		v := r.Headers[k]
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, usagef(fmt.Sprintf("%s: server %q: header %q: want a name without spaces or colons and a value on one line (value %s)", r.File, r.Name, k, transport.Redacted))
		}
		f.header.Set(k, v)
		f.secrets = append(f.secrets, k+"="+v)
	}
	return nil, nil
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

// termPrompter asks for VS Code inputs on the terminal: the prompt on out,
// the answer read from in, which must be a terminal (else it cannot ask:
// hostconfig.ErrCannotAsk); a password is not echoed, and a pickString is
// a numbered list of its options. An interrupt (ctx ends) abandons the
// question and puts the terminal back as it was.
type termPrompter struct {
	ctx context.Context
	in  io.Reader
	out io.Writer
}

// Prompt asks for one input.
func (p termPrompter) Prompt(in hostconfig.Input) (string, error) {
	f, ok := p.in.(*os.File)
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
	fmt.Fprintf(p.out, "sonde: %s (input %s): ", label, textfmt.Escape(in.ID))
	text, err := p.read(f, in.Password)
	if in.Password && err == nil {
		fmt.Fprintln(p.out)
	}
	return text, err
}

// choose asks for a pickString: its options numbered from 1, the default
// marked, until the answer is an option's number, value or label (or
// empty, for the default).
func (p termPrompter) choose(f *os.File, in hostconfig.Input, label string) (string, error) {
	fmt.Fprintf(p.out, "sonde: %s (input %s):\n", label, textfmt.Escape(in.ID))
	def := ""
	for i, o := range in.Options {
		line := fmt.Sprintf("  %d. %s", i+1, textfmt.Escape(o.Text()))
		if o.Value == in.Default {
			line += " (default)"
			def = fmt.Sprintf(" [%d]", i+1)
		}
		fmt.Fprintln(p.out, line)
	}
	for {
		fmt.Fprintf(p.out, "sonde: choose 1-%d%s: ", len(in.Options), def)
		text, err := p.read(f, false)
		if err != nil {
			return "", err
		}
		if v, ok := in.Choice(text); ok {
			return v, nil
		}
		fmt.Fprintf(p.out, "sonde: %q is not one of the choices: answer with a number from 1 to %d, or an option\n", text, len(in.Options))
	}
}

// read reads one answer from the terminal f; an interrupt (ctx ends)
// abandons it.
func (p termPrompter) read(f *os.File, password bool) (string, error) {
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
	case <-p.ctx.Done():
		// The read goes on until sonde exits, which it is about to do.
		if state != nil {
			_ = term.Restore(f.Fd(), state)
		}
		fmt.Fprintln(p.out)
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

// completeServerNames registers, on every command of root that has
// --server, a shell completion of the server names found (with their host
// and scope as the description), from --config FILE when it is given.
func completeServerNames(root *cobra.Command) {
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	for _, c := range cmds {
		if c.Flags().Lookup("server") == nil {
			continue
		}
		_ = c.RegisterFlagCompletionFunc("server", func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			h, err := currentHostEnv()
			if err != nil {
				return nil, cobra.ShellCompDirectiveError
			}
			file, _ := cmd.Flags().GetString("config")
			var out []string
			for _, s := range h.load(file).Servers {
				out = append(out, s.Name+"\t"+s.Where())
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		})
	}
}
