package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/replay/against"
	"github.com/sonde-mcp/sonde/replay/serve"
)

// replayFlags are the flags of `sonde replay --serve` and `--against`.
type replayFlags struct {
	serve, against string
	speed          float64
	noPacing       bool
	ignore         []string
}

func newReplayCmd(io streams) *cobra.Command {
	var f serverFlags
	var rf replayFlags
	var frames int
	cmd := &cobra.Command{
		Use:   "replay (FILE | --serve FILE | --against FILE (-- COMMAND [ARG...] | --url URL))",
		Short: "Step through a capture in the UI, serve it as a mock server, or re-send it to a live server and diff",
		Long: `Replay a capture (a file written with --record; docs/capture-format.md).

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

  sonde replay --serve FILE
      Act as an MCP server on stdio built from the capture: each request is matched to a
      recorded one (same method and params without _meta; else the same method and tool,
      prompt or resource) and answered with the recorded response, its id rewritten to the
      caller's, with the notifications, server requests and malformed lines recorded around
      it, at their recorded delays (--speed); the recorded stderr too, and the server's own
      exit (a crash). Unmatched requests get JSON-RPC error -32010.
      Use it as the server command of any client: sonde -- sonde replay --serve bug.jsonl

  sonde replay --against FILE -- COMMAND [ARG...]   (or --url URL)
      Run the handshake with the recorded protocol version, re-send the recorded requests
      with their recorded pacing and deadlines, and compare each new response with the
      recorded one: a structural diff that ignores volatile fields (docs/replay.md) and
      --ignore paths, and outcomes that changed in kind (a result that is now an error, a
      timeout). Exit status 0 when everything is equal, 1 when anything differs.

Matching, timing and the diff are described in docs/replay.md.

` + exitCodesHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			if rf.speed <= 0 {
				return usagef(fmt.Sprintf("--speed %v: want a positive factor (e.g. 2 for twice as fast), or --no-pacing", rf.speed))
			}
			speed := rf.speed
			if rf.noPacing {
				speed = 0
			}
			switch {
			case rf.serve != "" && rf.against != "":
				return usagef("give either --serve FILE or --against FILE, not both")
			case rf.serve != "":
				return runServe(cmd, io, &f, &rf, args, speed)
			case rf.against != "":
				return runAgainst(cmd, io, &f, &rf, args, speed)
			case len(args) == 1 && cmd.ArgsLenAtDash() < 0:
				return runReplayTUI(cmd.Context(), io, args[0], frames)
			case len(args) > 1:
				return usagef("sonde replay takes one capture FILE; a server command goes with --against FILE -- COMMAND (see sonde replay --help)")
			}
			return usagef("replay needs a capture FILE, --serve FILE or --against FILE (see sonde replay --help)")
		},
	}
	f.register(cmd.Flags())
	fs := cmd.Flags()
	fs.StringVar(&rf.serve, "serve", "", "act as a mock MCP server on stdio built from capture `FILE`")
	fs.StringVar(&rf.against, "against", "", "re-send the requests of capture `FILE` to the server and report the differences")
	fs.Float64Var(&rf.speed, "speed", 1, "play the recorded delays this many times faster (0.5: twice as slow)")
	fs.BoolVar(&rf.noPacing, "no-pacing", false, "send everything at once, without the recorded delays")
	fs.IntVar(&frames, "frames", 20000, "the UI (replay FILE): frames kept in the Frames pane (older ones are evicted and counted)")
	fs.StringArrayVar(&rf.ignore, "ignore", nil, "with --against: leave `PATH` out of the diff, e.g. result.content[*].text or ..etag (repeatable)")
	return cmd
}

// openCapture opens a capture named on the command line; a missing or
// unreadable file is a usage error.
func openCapture(flag, path string) (*os.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, usagef(flag + " " + err.Error())
	}
	return fh, nil
}

// runServe is `sonde replay --serve FILE`: the mock server on stdio.
func runServe(cmd *cobra.Command, io streams, f *serverFlags, rf *replayFlags, args []string, speed float64) error {
	path := rf.serve
	if len(args) > 0 || f.url != "" {
		return usagef("--serve takes no server command and no --url: it is the server")
	}
	if f.record != "" || f.trace || len(rf.ignore) > 0 {
		return usagef("--record, --trace and --ignore apply to --against, not to --serve")
	}
	fh, err := openCapture("--serve", path)
	if err != nil {
		return err
	}
	script, err := serve.Build(fh)
	fh.Close()
	if err != nil {
		return usagef("--serve " + path + ": " + err.Error())
	}
	for _, w := range script.Warnings {
		fmt.Fprintln(io.err, "sonde replay: warning: "+w)
	}
	err = serve.Serve(cmd.Context(), script, io.in, io.out, serve.Options{Speed: speed, Log: io.err, Stderr: io.err, MaxLineBytes: int(f.maxLineBytes)})
	var exit *serve.ExitError
	if errors.As(err, &exit) {
		return &exitStatus{code: exit.Code, msg: "replay: " + exit.Error()}
	}
	if err != nil && cmd.Context().Err() != nil {
		return &exitStatus{code: exitInterrupted}
	}
	return err
}

// runAgainst is `sonde replay --against FILE -- COMMAND`: the re-drive.
func runAgainst(cmd *cobra.Command, io streams, f *serverFlags, rf *replayFlags, args []string, speed float64) error {
	_, argv, err := f.serverArgv(cmd, args, 0, "replay --against FILE takes no arguments before --")
	if err != nil {
		return err
	}
	var ignore []against.Path
	for _, s := range rf.ignore {
		p, err := against.ParsePath(s)
		if err != nil {
			return usagef(err.Error())
		}
		ignore = append(ignore, p)
	}
	fh, err := openCapture("--against", rf.against)
	if err != nil {
		return err
	}
	sess, err := against.Load(fh)
	fh.Close()
	if err != nil {
		return usagef("--against " + rf.against + ": " + err.Error())
	}
	for _, w := range sess.Warnings {
		fmt.Fprintln(io.err, "sonde replay: warning: "+w)
	}
	if !cmd.Flags().Changed("protocol-version") && sess.ProtocolVersion != "" && mcp.IsSupportedVersion(sess.ProtocolVersion) {
		f.protocolVersion = sess.ProtocolVersion
	}
	var timeout = f.timeout
	if !cmd.Flags().Changed("timeout") {
		timeout = 0
	}
	s, err := f.connect(cmd.Context(), io, argv)
	if err != nil {
		return jsonFailure(io.out, f.json, err)
	}
	defer s.close()
	rep, err := against.Run(cmd.Context(), s.c, sess, against.Options{Speed: speed, Timeout: timeout, Ignore: ignore})
	if err != nil {
		return &exitStatus{code: exitInterrupted, msg: "replay interrupted"}
	}
	if f.json {
		writeJSON(io.out, rep)
	} else {
		rep.WriteText(io.out)
	}
	if !rep.Equal {
		_, diff, _ := rep.Counts()
		return &exitStatus{code: exitToolError, msg: fmt.Sprintf("replay: %d of %d requests answered differently", diff, len(rep.Results))}
	}
	return nil
}
