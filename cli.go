package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
)

const exitCodesHelp = `Exit status:
  0    ok
  1    a tool result with isError, or a failed line in script
  2    usage error
  3    MCP_ERROR         the server answered with a JSON-RPC error
  4    MCP_TIMEOUT       no answer before the deadline
  5    MCP_PROCESS_EXIT  the server exited (or CLIENT_CLOSED)
  6    MCP_PROTOCOL      the server broke the protocol
  7    MCP_SPAWN         the server could not be started
  8    MCP_HANDSHAKE     initialize failed or the protocol version is unsupported
  9    MCP_BUSY          too many requests in flight (--max-pending)
  130  interrupted
Errors are printed on stderr as one line: sonde: CODE: message (see docs/errors.md).`

func newRootCmd(io streams) *cobra.Command {
	var tf tuiFlags
	root := &cobra.Command{
		Use:   "sonde [flags] -- COMMAND [ARG...]",
		Short: "Inspect and debug MCP servers from the terminal",
		Long: `sonde launches an MCP server (a stdio subprocess) and shows, live, what the client knows:
every request in flight by id, the raw frames in both directions exactly as on the wire,
the server's stderr, and a tool picker to make calls.

  sonde -- npx -y @modelcontextprotocol/server-everything    the interactive UI
  sonde demo                                                  the out-of-order lesson

The server command comes after "--" and is run directly (no shell). The subcommands
below do the same work headless, for scripts:
  sonde tools -- ./my-server --flag
  sonde call echo --args '{"value":"hi"}' -- ./my-server

` + exitCodesHelp,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return usagef(fmt.Sprintf("unknown command %q (see sonde --help); a server command goes after --", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return runTUI(cmd.Context(), io, &tf, args, nil)
		},
	}
	tf.register(root)
	root.SetVersionTemplate("sonde {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usagef(err.Error() + " (see sonde " + cmd.Name() + " --help)")
	})
	root.AddCommand(
		newCallCmd(io), newToolsCmd(io), newCheckCmd(io), newScriptCmd(io), newBenchCmd(io),
		newFixtureCmd(io), newDemoCmd(io), newVersionCmd(io),
	)
	return root
}

// serverFlags are the flags of every subcommand that talks to a server.
type serverFlags struct {
	timeout         time.Duration
	resetOnProgress bool
	maxTotal        time.Duration
	maxPending      int
	maxLineBytes    byteSize
	stderrBytes     byteSize
	killAfter       time.Duration
	env             []string
	passEnv         []string
	cwd             string
	strict          bool
	protocolVersion string
	json            bool
	trace           bool
	record          string
	redact          []string
}

func (f *serverFlags) register(fs *pflag.FlagSet) {
	f.maxLineBytes = transport.DefaultMaxLineBytes
	f.stderrBytes = transport.DefaultStderrBytes
	fs.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "deadline of each request")
	fs.BoolVar(&f.resetOnProgress, "timeout-reset-on-progress", false, "restart a request's deadline when the server reports progress for it")
	fs.DurationVar(&f.maxTotal, "max-total-timeout", 0, "with --timeout-reset-on-progress, the longest a request may live (default 10 x --timeout)")
	fs.IntVar(&f.maxPending, "max-pending", client.DefaultMaxPending, "requests in flight at most; past it a request fails with MCP_BUSY")
	fs.Var(&f.maxLineBytes, "max-line-bytes", "longest line accepted from the server's stdout (e.g. 8MiB); longer is MCP_PROTOCOL")
	fs.Var(&f.stderrBytes, "stderr-bytes", "bytes of the server's stderr tail kept (e.g. 64KiB)")
	fs.DurationVar(&f.killAfter, "kill-after", transport.DefaultKillAfter, "grace period on close: after closing stdin, and again after SIGTERM")
	fs.StringArrayVar(&f.env, "env", nil, "set KEY=VALUE in the server's environment (repeatable)")
	fs.StringArrayVar(&f.passEnv, "pass-env", nil, "pass variable NAME from sonde's environment to the server (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "working directory of the server (default: sonde's)")
	fs.BoolVar(&f.strict, "strict", false, "treat a malformed line on stdout as corruption: fail everything pending and close the server")
	fs.StringVar(&f.protocolVersion, "protocol-version", "2025-11-25", "protocol version asked for in initialize")
	fs.BoolVar(&f.json, "json", false, "machine-readable output")
	fs.BoolVar(&f.trace, "trace", false, "print every frame, lifecycle event and stderr chunk on stderr as it happens")
	fs.StringVar(&f.record, "record", "", "write the session to FILE as it happens, mode 0600 (a capture: docs/capture-format.md); FILE must not exist")
	fs.StringArrayVar(&f.redact, "redact", nil, "in captures, replace what matches REGEX with «redacted» (repeatable); --env and --pass-env values always are")
}

// serverArgv splits args at "--": the n arguments of the subcommand itself,
// then the server command. wrongCount is the usage message when there are
// not exactly n arguments before "--".
func serverArgv(cmd *cobra.Command, args []string, n int, wrongCount string) ([]string, []string, error) {
	dash := cmd.ArgsLenAtDash()
	if dash < 0 || dash >= len(args) {
		return nil, nil, usagef("no server command: put it after --, e.g. sonde " + cmd.Name() + " ... -- ./server --flag")
	}
	if dash != n {
		return nil, nil, usagef(wrongCount)
	}
	return args[:dash], args[dash:], nil
}

// session is a connected, initialized client and what runs beside it.
type session struct {
	c      *client.Client
	trace  *tracer
	rec    *capture.Recorder
	recTo  string
	errw   io.Writer
	closed bool
}

// clientConfig turns the flags into the client's options and the server's
// process configuration.
func (f *serverFlags) clientConfig(argv []string) (client.Options, transport.StdioConfig, error) {
	if f.maxPending <= 0 {
		return client.Options{}, transport.StdioConfig{}, usagef("--max-pending must be at least 1")
	}
	env, err := transport.BuildEnv(os.Environ(), f.passEnv, f.env)
	if err != nil {
		return client.Options{}, transport.StdioConfig{}, usagef(err.Error())
	}
	opts := client.Options{
		Timeout: f.timeout, ResetOnProgress: f.resetOnProgress, MaxTotalTimeout: f.maxTotal,
		MaxPending: f.maxPending, MaxLineBytes: int(f.maxLineBytes), Strict: f.strict,
		ProtocolVersion: f.protocolVersion, ClientVersion: version,
	}
	cfg := transport.StdioConfig{
		Argv: argv, Dir: f.cwd, Env: env, MaxLineBytes: int(f.maxLineBytes),
		StderrBytes: int(f.stderrBytes), KillAfter: f.killAfter,
	}
	return opts, cfg, nil
}

// connect starts the server, runs the handshake, and returns the session.
// The caller must call close.
func (f *serverFlags) connect(ctx context.Context, io streams, argv []string) (*session, error) {
	opts, cfg, err := f.clientConfig(argv)
	if err != nil {
		return nil, err
	}
	var rec *capture.Recorder
	if f.record != "" {
		if rec, err = f.startRecorder(f.record, argv); err != nil {
			return nil, err
		}
	}
	c := client.New(opts)
	s := &session{c: c, rec: rec, recTo: f.record, errw: io.err}
	if rec != nil {
		rec.Follow(c)
	}
	if !liveFrom(ctx).add(c) {
		s.close()
		return nil, &client.Error{Code: client.CodeAborted, Message: "interrupted before the server started"}
	}
	if f.trace {
		s.trace = startTracer(c, io.err)
	}
	err = c.Connect(client.Stdio(cfg))
	if err == nil {
		_, err = c.Initialize(ctx)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *session) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.c.Close()
	if s.trace != nil {
		s.trace.wait()
	}
	if s.rec != nil {
		reportCapture(s.errw, s.recTo, s.rec.Close())
	}
}

// byteSize is a flag value in bytes that accepts KiB/MiB/GiB (and KB/MB/GB
// as the same binary units) suffixes.
type byteSize int

func (b *byteSize) String() string { return formatBytes(int64(*b)) }

func (b *byteSize) Type() string { return "bytes" }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return fmt.Errorf("%q is not a positive size (e.g. 65536, 64KiB, 8MiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10)
}
