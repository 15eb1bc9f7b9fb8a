package connect

import (
	"github.com/sonde-mcp/sonde/client"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/transport"
)

// Target is the server a command talks to, resolved from the flags (and,
// with --server, from a host config entry): what Open starts or dials.
type Target struct {
	// Argv is the server's command line (nil over HTTP).
	Argv []string
	// Server is the name of the host config entry it came from ("" for a
	// command line or --url).
	Server string
	// URL is the server's URL over HTTP ("" for a command), Mode its
	// --transport.
	URL  string
	Mode string
	// Env is added to the server's environment: a config entry's env,
	// then --env (which wins).
	Env []string
	// Cwd is the server's working directory ("": sonde's).
	Cwd string
	// Header are a config entry's HTTP headers (--header wins for a name it
	// sets too).
	Header http.Header
	// Secrets are what captures redact besides the flags' own values: a
	// config entry's header values and what its references brought in
	// (hostconfig.Server.Secrets), as NAME=VALUE.
	Secrets []string
	// Hide are what the entry's references brought in, hidden where the
	// server's command line is shown.
	Hide []string

	// MaxPending, when above --max-pending, replaces it (bench: -c calls
	// in flight need room in the pending map).
	MaxPending int
	// ProtocolVersion, when set, replaces --protocol-version (replay
	// --against: the version the capture recorded).
	ProtocolVersion string
	// ServerRequests, when set and no --root, --sampling-reply or
	// --elicit-reply/--elicit-defaults is given, is what sonde declares and
	// how it answers (replay --against: the capture's client capabilities
	// and recorded answers).
	ServerRequests *client.ServerRequests
}

// Target is the server given on the command line: argv (after --), or
// --url when argv is nil.
func (f *Flags) Target(argv []string) *Target {
	return &Target{Argv: argv, URL: f.URL, Mode: f.Mode, Env: f.Env, Cwd: f.Cwd}
}

// CallArgs are the arguments of sonde call that reach t's server (the
// interactive UI's Y copies a call with them): a config entry by name
// (with --config FILE when given: its command line may hold what its
// references brought in), --url with a --transport other than auto, or
// "--" and the command line. Other flags (--env, --header…) are not
// carried.
func (t *Target) CallArgs(config string) []string {
	switch {
	case t.Server != "":
		if config != "" {
			return []string{"--config", config, "--server", t.Server}
		}
		return []string{"--server", t.Server}
	case t.URL != "":
		out := []string{"--url", t.URL}
		if t.Mode != "" && t.Mode != string(transport.ModeAuto) {
			out = append(out, "--transport", t.Mode)
		}
		return out
	case len(t.Argv) > 0:
		return append([]string{"--"}, t.Argv...)
	}
	return nil
}

// Resolve splits args at "--": the n arguments of the command itself, then
// the server, resolved into a Target: the command after "--", --url, or
// with --server (and --config) an entry of a host config file, whose inputs
// are asked for on the terminal. wrongCount is the usage message when there
// are not exactly n arguments before "--".
func Resolve(cmd *cobra.Command, f *Flags, args []string, n int, wrongCount string) ([]string, *Target, error) {
	if len(f.Servers) > 1 {
		return nil, nil, cmdutil.Usagef(cmd.CommandPath() + " talks to one server: give --server once (sonde tools and sonde call take several, and --all)")
	}
	if f.Server != "" || f.Config != "" {
		return resolveConfig(cmd, f, args, n, wrongCount)
	}
	if err := f.CheckInputFlag(); err != nil {
		return nil, nil, err
	}
	dash := cmd.ArgsLenAtDash()
	if f.URL != "" {
		if dash >= 0 && dash < len(args) {
			return nil, nil, cmdutil.Usagef("give either --url or a server command after --, not both")
		}
		if len(args) != n {
			return nil, nil, cmdutil.Usagef(strings.Replace(wrongCount, "before --", "(with --url)", 1))
		}
		return args, f.Target(nil), nil
	}
	if dash < 0 || dash >= len(args) {
		return nil, nil, cmdutil.Usagef("no server command: put it after --, e.g. sonde " + cmd.Name() + " ... -- ./server --flag, or connect with --url URL")
	}
	if dash != n {
		return nil, nil, cmdutil.Usagef(wrongCount)
	}
	return args[:dash], f.Target(args[dash:]), nil
}
