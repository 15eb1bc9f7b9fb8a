package main

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
	"github.com/sonde-mcp/sonde/transport"
)

// registerConfig adds --config and --server.
func (f *serverFlags) registerConfig(fs *pflag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "read servers from this host config `FILE` (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Cline); with --server")
	fs.StringVar(&f.server, "server", "", "start the server `NAME` from --config FILE, or from the known host config files (see sonde config list)")
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

// load reads the servers of file (every known file when file is "").
func (h hostEnv) load(file string) hostconfig.Found {
	if file == "" {
		return hostconfig.Discover(h.paths.Hosts, h.project)
	}
	host, scope := hostconfig.Detect(file, h.paths.Hosts, h.project)
	servers, problems := hostconfig.ReadFile(file, host, scope, h.project)
	f := hostconfig.Found{Servers: servers, Problems: problems}
	if len(problems) != 1 || !errors.Is(problems[0].Err, hostconfig.ErrRead) {
		f.Files = []string{file}
	}
	return f
}

// resolve expands the references of s, asking for inputs with p (nil:
// only check them).
func (h hostEnv) resolve(s hostconfig.Server, p hostconfig.Prompter) (hostconfig.Server, error) {
	return s.Resolve(hostconfig.Env{Lookup: os.LookupEnv, Home: h.home, Workspace: h.project, Prompter: p})
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

// useServer resolves s and sets the flags from it: a stdio entry gives the
// argv returned, its env (before --env, which wins) and its cwd (unless
// --cwd); a URL entry gives --url, --transport (unless given) and its
// headers (unless --header sets the same name).
func (f *serverFlags) useServer(cmd *cobra.Command, h hostEnv, s hostconfig.Server, p hostconfig.Prompter) ([]string, error) {
	r, err := h.resolve(s, p)
	if err != nil {
		return nil, usagef(err.Error())
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
// the answer read from in, which must be a terminal; a password is not
// echoed. An interrupt (ctx ends) abandons the question and puts the
// terminal back as it was.
type termPrompter struct {
	ctx context.Context
	in  io.Reader
	out io.Writer
}

// Prompt asks for one input.
func (p termPrompter) Prompt(in hostconfig.Input) (string, error) {
	f, ok := p.in.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return "", errors.New("sonde asks for inputs on a terminal, and stdin is not one")
	}
	label := in.Description
	if label == "" {
		label = in.ID
	}
	if in.Default != "" && !in.Password {
		label += " [" + in.Default + "]"
	}
	fmt.Fprintf(p.out, "sonde: %s (input %s): ", label, in.ID)
	state, _ := term.GetState(f.Fd())
	type answer struct {
		text string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		text, err := readAnswer(f, in.Password)
		done <- answer{text, err}
	}()
	select {
	case a := <-done:
		if in.Password {
			fmt.Fprintln(p.out)
		}
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
