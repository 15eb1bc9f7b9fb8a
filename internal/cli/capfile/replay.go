package capfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/replay/against"
	"github.com/sonde-mcp/sonde/replay/serve"
)

// ReplayOptions are the flags of `sonde replay`.
type ReplayOptions struct {
	Server         connect.Flags // --against's server
	Serve, Against string
	Speed          float64
	NoPacing       bool
	Ignore         []string
	Frames         int // the UI's Frames pane
	// The mock's (--serve): --repeat, --session, --listen, --allow-remote
	// (its --strict is Server.Strict).
	Repeat      string
	Session     int
	Loose       bool // --loose: a call with other arguments gets a recorded answer of its tool
	Listen      string
	AllowRemote bool
	// --fault, --faults, --seed (--serve, stdio and --listen; docs/chaos.md).
	Faults     []string
	FaultsFile string
	Seed       uint64
	// --break, --breaks, --break-timeout (--serve; replaybreaks.go), and
	// what gives them a socket (the root command's).
	Breaks       []string
	BreaksFile   string
	BreakTimeout time.Duration
	breakServer  BreakServer
}

// OpenUI runs the interactive UI over the capture at path (`sonde replay
// FILE`), keeping frames frames in its Frames pane. The UI is another
// family's (internal/cli/interactive): the root command passes it in.
type OpenUI func(ctx context.Context, env *cmdutil.Env, path string, frames int) error

// NewCmdReplay is `sonde replay`: the capture in the UI (openUI), as a
// mock server (--serve), or re-sent to a live server (--against).
func NewCmdReplay(env *cmdutil.Env, openUI OpenUI, breaks BreakServer) *cobra.Command {
	o := ReplayOptions{breakServer: breaks}
	cmd := &cobra.Command{
		Use:   "replay (FILE | --serve FILE [--listen ADDR] | --against FILE (-- COMMAND [ARG...] | --url URL))",
		Short: "Step through a capture in the UI, serve it as a mock server (stdio or HTTP), or re-send it to a live server and diff",
		Long:  replayHelp + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, env, &o, args, openUI)
		},
	}
	o.register(cmd)
	return cmd
}

// replayHelp is sonde replay's long help, before the exit codes.
const replayHelp = `Replay a capture (a file written with --record; docs/capture-format.md).

  sonde replay FILE
      Open the capture in the interactive UI, read-only: no server is started and nothing
      is sent. The panes show the session as it was at the cursor: the pending map with
      the ages and deadlines of that moment, the frames, stderr and the tool list. It
      opens at the end, paused.
        space   play / pause              + / -   speed (0.25x to 20x, then instant)
        ← / ,   step one event back       → / .   step one event forward
        < / >   start / end               t       jump to a time (1.5s, 2m, #N for event N)
        e / E   next / previous error or protocol violation
        i       next frame of an id (the Pending pane's selection, or type one)
      A file that is missing or is not a capture fails before the UI opens, with exit
      status 2. A capture whose last line was cut (sonde was killed) opens with a warning.

  sonde replay --serve FILE [--listen ADDR]
      Act as an MCP server built from the capture, on stdio (or over HTTP with --listen):
      each request is matched to a recorded one (same method and params without _meta;
      with --loose, else the same method and tool, prompt or resource) and answered with the recorded
      response, its id rewritten to the caller's, with the notifications, server requests
      and malformed lines recorded around it, at their recorded delays (--speed); the
      recorded stderr too, and the server's own exit (a crash). Identical requests get the
      recorded answers in recorded order, then as --repeat says (cycle, last, fail).
      What a capture rarely holds is answered on its own, and logged as synthesized:
      ping, logging/setLevel and resources/(un)subscribe ({} when the recorded server
      declared them), list methods (the newest recorded answer, whatever the params, or an
      empty list), completion/complete (empty), server/discover (from the recorded
      initialize); initialize answers with the client's protocol version when the recorded
      server answered it. --strict answers only recorded requests (and ping). Unmatched
      requests (a call with other arguments too, unless --loose) get JSON-RPC error -32010
      naming the nearest recorded request and the argument paths that differ.
      --session N serves one session of a capture that restarted the server.
      --listen ADDR serves Streamable HTTP on http://ADDR/mcp and legacy HTTP+SSE on /sse,
      a fresh mock per client session; a non-loopback ADDR needs --allow-remote.
      --fault RULE, --faults FILE, --seed N: fault rules between the client and the mock
      (over HTTP, between each client session and its mock), as sonde tap has them
      (docs/chaos.md); each rule that fires says so on stderr. A mock of a recorded bug that also drops, delays or corrupts on purpose.
      --break QUERY, --breaks FILE, --break-timeout D: hold the mock's messages (dir:out the
      client's, dir:in the mock's) until sonde breaks --session replay-NAME lets them go
      (docs/breakpoints.md); the mock is then a session in the sessions folder.
      Use it as the server command of any client: sonde -- sonde replay --serve bug.jsonl

  sonde replay --against FILE -- COMMAND [ARG...]   (or --url URL)
      Run the handshake with the recorded protocol version, re-send the recorded requests
      with their recorded pacing and deadlines, and compare each new response with the
      recorded one: a structural diff that ignores volatile fields (docs/replay.md) and
      --ignore paths, and outcomes that changed in kind (a result that is now an error, a
      timeout). Exit status 0 when everything is equal, 1 when anything differs.

FILE may also be a session recorded by sonde tap, named by its id (sonde sessions lists
them: the file name without .jsonl) or by the start of it when only one session begins so.

Matching, timing and the diff are described in docs/replay.md.

`

// runReplay checks the flags, resolves the captures named by a session id,
// and runs the mode asked: --serve, --against, or the UI over FILE.
func runReplay(cmd *cobra.Command, env *cmdutil.Env, o *ReplayOptions, args []string, openUI OpenUI) error {
	if o.Speed <= 0 {
		return cmdutil.Usagef(fmt.Sprintf("--speed %v: want a positive factor (e.g. 2 for twice as fast), or --no-pacing", o.Speed))
	}
	speed := o.Speed
	if o.NoPacing {
		speed = 0
	}
	// A session of sonde tap may be named by its id.
	for _, p := range []*string{&o.Serve, &o.Against} {
		if *p != "" {
			r, err := cmdutil.CaptureArg(*p)
			if err != nil {
				return err
			}
			*p = r
		}
	}
	if len(args) == 1 && cmd.ArgsLenAtDash() < 0 {
		r, err := cmdutil.CaptureArg(args[0])
		if err != nil {
			return err
		}
		args[0] = r
	}
	switch {
	case o.Serve != "" && o.Against != "":
		return cmdutil.Usagef("give either --serve FILE or --against FILE, not both")
	case o.Serve != "":
		return runServe(cmd, env, o, args, speed)
	case o.Against != "":
		return runAgainst(cmd, env, o, args, speed)
	case len(args) == 1 && cmd.ArgsLenAtDash() < 0:
		return openUI(cmd.Context(), env, args[0], o.Frames)
	case len(args) > 1:
		return cmdutil.Usagef("sonde replay takes one capture FILE; a server command goes with --against FILE -- COMMAND (see sonde replay --help)")
	}
	return cmdutil.Usagef("replay needs a capture FILE, --serve FILE or --against FILE (see sonde replay --help)")
}

// register adds the flags of sonde replay to cmd.
func (o *ReplayOptions) register(cmd *cobra.Command) {
	o.Server.Register(cmd.Flags())
	fs := cmd.Flags()
	if f := fs.Lookup("strict"); f != nil {
		f.Usage = "with --serve: answer only recorded requests (and ping), nothing synthesized; with --against: " + f.Usage
	}
	fs.StringVar(&o.Serve, "serve", "", "act as a mock MCP server built from capture `FILE` (on stdio, or over HTTP with --listen)")
	fs.StringVar(&o.Against, "against", "", "re-send the requests of capture `FILE` to the server and report the differences")
	fs.Float64Var(&o.Speed, "speed", 1, "play the recorded delays this many times faster (0.5: twice as slow)")
	fs.BoolVar(&o.NoPacing, "no-pacing", false, "send everything at once, without the recorded delays")
	fs.IntVar(&o.Frames, "frames", 20000, "the UI (replay FILE): frames kept in the Frames pane (older ones are evicted and counted)")
	fs.BoolVar(&o.Loose, "loose", false, "with --serve: answer a call of a recorded tool, prompt or resource with other arguments with one of its recorded answers (by default it gets error -32010 naming the arguments that differ; not with --strict)")
	fs.StringVar(&o.Repeat, "repeat", "cycle", "with --serve: what a request gets once its recorded answers were all played, `MODE` cycle (them again, in order), last (the last one) or fail (an error)")
	fs.StringVar(&o.Listen, "listen", "", "with --serve: serve the mock over HTTP on `ADDR` (host:port; Streamable HTTP on /mcp, legacy HTTP+SSE on /sse) instead of stdio; loopback only unless --allow-remote")
	fs.BoolVar(&o.AllowRemote, "allow-remote", false, "with --listen: accept an address that is not loopback (the mock answers anyone who can reach it)")
	fs.IntVar(&o.Session, "session", 0, "with --serve: serve only the capture's session `N` (1 for the first; a restart starts the next); 0: all as one pool")
	fs.StringArrayVar(&o.Faults, "fault", nil, "with --serve: a fault rule on the mock's traffic, RULE = action:match,options (repeatable; docs/chaos.md)")
	fs.StringVar(&o.FaultsFile, "faults", "", "with --serve: read fault rules from `FILE`, one a line")
	fs.Uint64Var(&o.Seed, "seed", 0, "with --fault: the seed of the rules' draws (default: a new one, said on stderr)")
	o.registerBreaks(fs)
	fs.StringArrayVar(&o.Ignore, "ignore", nil, "with --against: leave `PATH` out of the diff, e.g. result.content[*].text or ..etag (repeatable)")
}

// openCapture opens a capture named on the command line; a missing or
// unreadable file is a usage error.
func openCapture(flag, path string) (*os.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, cmdutil.Usagef(flag + " " + err.Error())
	}
	return fh, nil
}

// runServe is `sonde replay --serve FILE`: the mock server on stdio.
func runServe(cmd *cobra.Command, env *cmdutil.Env, o *ReplayOptions, args []string, speed float64) error {
	f := &o.Server
	path := o.Serve
	if len(args) > 0 || f.URL != "" {
		return cmdutil.Usagef("--serve takes no server command and no --url: it is the server")
	}
	if o.Listen != "" {
		if err := checkListen(o.Listen, o.AllowRemote); err != nil {
			return err
		}
	} else if o.AllowRemote {
		return cmdutil.Usagef("--allow-remote goes with --listen ADDR")
	}
	if f.Record != "" || f.Trace || len(o.Ignore) > 0 {
		return cmdutil.Usagef("--record, --trace and --ignore apply to --against, not to --serve")
	}
	repeat, err := serve.ParseRepeat(o.Repeat)
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	if o.Loose && f.Strict {
		return cmdutil.Usagef("--loose and --strict contradict each other: --strict answers only recorded requests")
	}
	fh, err := openCapture("--serve", path)
	if err != nil {
		return err
	}
	script, err := serve.Build(fh)
	fh.Close()
	if err != nil {
		return cmdutil.Usagef("--serve " + path + ": " + err.Error())
	}
	if o.Session < 0 || o.Session > script.Sessions {
		return cmdutil.Usagef(fmt.Sprintf("--session %d: %s holds %d session(s) (1 to %d; 0 for all)", o.Session, path, script.Sessions, script.Sessions))
	}
	for _, w := range script.Warnings {
		fmt.Fprintln(env.Err, "sonde replay: warning: "+w)
	}
	faults, err := chaos.Load(o.Faults, o.FaultsFile, o.Seed, cmd.Flags().Changed("seed"))
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	so := serve.Options{Speed: speed, Log: env.Err, Stderr: env.Err, MaxLineBytes: int(f.MaxLineBytes), Strict: f.Strict, Loose: o.Loose, Repeat: repeat, Session: o.Session}
	stopBreaks, err := o.serveBreaks(env, &so)
	if err != nil {
		return err
	}
	defer stopBreaks()
	if o.Listen != "" {
		if faults != nil {
			so.Wrap = faultWrap(env, faults, int(f.MaxLineBytes))
		}
		return listenServe(cmd.Context(), env, o, script, so)
	}
	in, out := env.In, env.Out
	if faults != nil {
		var end func()
		in, out, end = faultPipe(env, faults, int(f.MaxLineBytes))
		defer end()
	}
	err = serve.Serve(cmd.Context(), script, in, out, so)
	var exit *serve.ExitError
	if errors.As(err, &exit) {
		return &cmdutil.ExitStatus{Code: exit.Code, Msg: "replay: " + exit.Error()}
	}
	if err != nil && cmd.Context().Err() != nil {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted}
	}
	return err
}

// faultPipe puts fault rules between the host (env's streams) and the
// mock: the host's lines reach the mock through in, the mock's reach the
// host through out, a line at a time through the rules (chaos.Pipe); each
// rule that fires says so on stderr. end writes what is held and closes
// the pipe.
func faultPipe(env *cmdutil.Env, faults *chaos.Engine, maxLine int) (in io.Reader, out io.Writer, end func()) {
	fmt.Fprintf(env.Err, "sonde replay: fault rules on (--seed %d)\n", faults.Seed())
	pr, pw := io.Pipe()
	p := faults.NewPipe(pw, env.Out, env.Err, maxLine, chaos.Hooks{Note: func(n chaos.Note) {
		fmt.Fprintln(env.Err, "sonde replay: "+n.Text)
	}})
	go func() {
		_, _ = io.Copy(p.ToServer, env.In)
		_ = p.ToServer.End()
		_ = pw.Close()
	}()
	return pr, p.ToHost, func() {
		_ = p.ToHost.End()
		p.Close()
		_ = pr.Close()
	}
}

// faultWrap puts fault rules between each HTTP client of the mock and its
// session (serve.Options.Wrap): the client's messages reach the mock, and
// the mock's lines reach the client's streams, a line at a time through
// the rules; each rule that fires says so on stderr.
func faultWrap(env *cmdutil.Env, faults *chaos.Engine, maxLine int) func(toMock, toClient io.Writer) (io.Writer, io.Writer, func()) {
	fmt.Fprintf(env.Err, "sonde replay: fault rules on (--seed %d)\n", faults.Seed())
	return func(toMock, toClient io.Writer) (io.Writer, io.Writer, func()) {
		p := faults.NewPipe(toMock, toClient, env.Err, maxLine, chaos.Hooks{Note: func(n chaos.Note) {
			fmt.Fprintln(env.Err, "sonde replay: "+n.Text)
		}})
		return p.ToServer, p.ToHost, func() {
			_ = p.ToHost.End()
			p.Close()
		}
	}
}

// checkListen refuses a --listen address that is not host:port, or not
// loopback without --allow-remote.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cmdutil.Usagef(fmt.Sprintf("--listen %q: want HOST:PORT, e.g. 127.0.0.1:3001 (%v)", addr, err))
	}
	if allowRemote {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return cmdutil.Usagef(fmt.Sprintf("--listen %q is not a loopback address: the mock would answer anyone who can reach it; add --allow-remote to mean it", addr))
}

// listenServe is `sonde replay --serve FILE --listen ADDR`: the mock over
// HTTP until interrupted.
func listenServe(ctx context.Context, env *cmdutil.Env, o *ReplayOptions, script *serve.Script, so serve.Options) error {
	so.LoopbackOnly = !o.AllowRemote
	h, err := serve.NewHandler(script, so)
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	defer h.Close()
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "replay: --listen: " + err.Error()}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Err, "sonde replay: serving %s on http://%s/mcp (Streamable HTTP) and http://%s/sse (HTTP+SSE)\n", o.Serve, l.Addr(), l.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return fmt.Errorf("replay: --listen: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		h.Close()
		srv.Shutdown(sctx)
		srv.Close()
		<-done
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted}
	}
}

// runAgainst is `sonde replay --against FILE -- COMMAND`: the re-drive.
func runAgainst(cmd *cobra.Command, env *cmdutil.Env, o *ReplayOptions, args []string, speed float64) error {
	f := &o.Server
	_, t, err := connect.Resolve(cmd, f, args, 0, "replay --against FILE takes no arguments before --")
	if err != nil {
		return err
	}
	var ignore []against.Path
	for _, s := range o.Ignore {
		p, err := against.ParsePath(s)
		if err != nil {
			return cmdutil.Usagef(err.Error())
		}
		ignore = append(ignore, p)
	}
	fh, err := openCapture("--against", o.Against)
	if err != nil {
		return err
	}
	sess, err := against.Load(fh)
	fh.Close()
	if err != nil {
		return cmdutil.Usagef("--against " + o.Against + ": " + err.Error())
	}
	for _, w := range sess.Warnings {
		fmt.Fprintln(env.Err, "sonde replay: warning: "+w)
	}
	if !cmd.Flags().Changed("protocol-version") && sess.ProtocolVersion != "" && mcp.IsSupportedVersion(sess.ProtocolVersion) {
		t.ProtocolVersion = sess.ProtocolVersion
	}
	// The capture's client capabilities and answers, unless flags say
	// what to declare.
	t.ServerRequests = sess.ServerRequests()
	var timeout = f.Timeout
	if !cmd.Flags().Changed("timeout") {
		timeout = 0
	}
	return connect.Run(cmd.Context(), env, f, t, func(ctx context.Context, s *connect.Session) error {
		rep, err := against.Run(ctx, s.Client, sess, against.Options{Speed: speed, Timeout: timeout, Ignore: ignore})
		if err != nil {
			return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "replay interrupted"}
		}
		if f.JSON {
			cmdutil.WriteJSON(env.Out, rep)
		} else {
			rep.WriteText(env.Out)
		}
		if !rep.Equal {
			_, diff, _ := rep.Counts()
			return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: fmt.Sprintf("replay: %d of %d requests answered differently", diff, len(rep.Results))}
		}
		return nil
	})
}
