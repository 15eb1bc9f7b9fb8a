package tap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/sessions"
)

// watchPoll is how often a followed recording is looked at for more.
const watchPoll = 100 * time.Millisecond

// WatchOptions are the flags of sonde watch.
type WatchOptions struct {
	JSON bool
	New  bool   // only what is recorded from now on
	Dir  string // the sessions folder (tests)
	// Signals, when set, stops the watch (tests); otherwise SIGINT does.
	Signals <-chan os.Signal
	// Replay opens an ended session in the watch UI (the root command's
	// sonde replay FILE UI).
	Replay ReplayUI
	// OTLP exports the sessions watched (--otlp-*).
	OTLP connect.OTLPFlags
}

// NewCmdWatch is `sonde watch`; replayUI opens an ended session in its UI.
func NewCmdWatch(env *cmdutil.Env, replayUI ReplayUI) *cobra.Command {
	o := WatchOptions{Replay: replayUI}
	cmd := &cobra.Command{
		Use:   "watch [SESSION] [--json] [--new]",
		Short: "Watch the sessions sonde tap records: a list, each live in the usual panes",
		Long: `In a terminal, sonde watch shows the sessions of the sessions folder that sonde tap
recorded: label, state (live or ended), the host process, start, the host's calls, errors,
late, unknown and duplicate answers, server; live ones first, / filters, read again every
second. enter opens a session in the usual panes: live while its tap runs (the recording
followed as it grows), else as a replay; q there comes back to the list. With SESSION (its
id, the start of one, or a capture file: one not named by sonde tap opens as a replay), that
session opens at once.

In a live session, calls from the Tools pane, the panes' lists (tools, resources, prompts),
resource reads and prompts go into the host's session through the tap, as sonde inject's do: the host never sees their
answers, and their frames are marked injected (i in Frames, inj in Pending). Keys:
docs/keys.md.

Piped, or with --json or --new, sonde watch follows one session (default: the newest live
one) and prints every frame both ways with its verdict, each request's outcome and latency,
the server's stderr, the notes of fault rules, as --trace prints them, from the session's
start (--new: from now on). It ends when the recording ends (the tap stopped) or on ctrl+c.
--json prints the capture's header, then each record as it is written, one JSON object a
line: the output is a capture itself (docs/capture-format.md).

  sonde watch                                  the list (printed: the newest live session)
  sonde watch github-20261201-143007-4242      that session in the panes
  sonde watch github-20261201-143007-4242 --new

With --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT), the spans of the session followed (of
each session opened, in the list) go to that collector as sonde tap's would (docs/otel.md),
with the recorded times: for a tap that ran without it.

Exit status: 0; 2 for a usage error, no live session (printed), or a file that is not a
capture; 130 when interrupted.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			if !o.JSON && !o.New && isTerminal(env.In) && isTerminal(env.Screen) {
				return runWatchUI(cmd.Context(), env, &o, arg)
			}
			return RunWatch(env, &o, arg)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "the capture's records, one JSON object a line")
	cmd.Flags().BoolVar(&o.New, "new", false, "only what is recorded from now on, not the session so far")
	o.OTLP.Register(cmd.Flags())
	return cmd
}

// RunWatch follows the session named by arg ("" for the newest live one).
func RunWatch(env *cmdutil.Env, o *WatchOptions, arg string) error {
	path, pid, err := watchTarget("sonde watch", o, arg)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return cmdutil.Usagef(fmt.Sprintf("sonde watch: %v", err))
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := o.Signals
	if sigs == nil {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		defer signal.Stop(c)
		sigs = c
	}
	go cancelOnSignal(ctx, sigs, cancel)
	fr := sessions.NewFollower(ctx, f, pid, watchPoll)
	var skipTo int64
	if o.New {
		if st, err := f.Stat(); err == nil {
			skipTo = st.Size()
		}
	}
	rd, err := capture.NewReader(fr)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return cmdutil.Usagef(fmt.Sprintf("sonde watch: %s: %v", path, err))
	}
	h := rd.Header()
	tee, stop, err := watchExport(env, o)
	if err != nil {
		return err
	}
	defer stop()
	if o.JSON {
		cmdutil.WriteJSON(env.Out, h) // the output reads as a capture
	} else {
		fmt.Fprintf(env.Out, "watching %s (%s)\n", filepath.Base(path), watchWhat(h))
	}
	for rec, err := range rd.All() {
		if err != nil {
			var fe *capture.FormatError
			if errors.As(err, &fe) {
				fmt.Fprintf(env.Err, "sonde watch: %v\n", err)
				continue
			}
			break
		}
		if rec.Offset < skipTo {
			continue
		}
		if showRecord(env, o, h, tee, rec) {
			break
		}
	}
	return nil
}

// cancelOnSignal calls cancel when a signal comes, until ctx is done.
func cancelOnSignal(ctx context.Context, sigs <-chan os.Signal, cancel context.CancelFunc) {
	select {
	case <-sigs:
		cancel()
	case <-ctx.Done():
	}
}

// showRecord hands one record of the recording followed to tee (when
// its event is one) and prints it; true when it is the recording's end.
func showRecord(env *cmdutil.Env, o *WatchOptions, h capture.Header, tee func(client.Event), rec capture.Record) bool {
	var ev client.Event
	isEv := false
	if tee != nil || !o.JSON { // --json alone writes the records as they are
		e, ok, err := h.Event(rec)
		ev, isEv = e, ok && err == nil
	}
	if isEv && tee != nil {
		tee(ev)
	}
	switch {
	case o.JSON:
		cmdutil.WriteJSON(env.Out, rec)
	case isEv:
		if line := connect.DescribeEvent(ev, h.Start); line != "" {
			fmt.Fprintln(env.Out, line)
		}
	case rec.Type == capture.TypeEnd:
		fmt.Fprintln(env.Out, "the recording ended")
	}
	return rec.Type == capture.TypeEnd
}

// watchExport starts the export --otlp-* asks for: tee hands it each
// event of the session followed (nil when there is none); stop ends the
// session's spans and sends what is left (its one warning on stderr).
func watchExport(env *cmdutil.Env, o *WatchOptions) (tee func(client.Event), stop func(), err error) {
	tel, err := connect.StartTelemetry(context.Background(), &o.OTLP, "sonde-watch", func(b []byte) []byte { return b })
	if err != nil {
		return nil, nil, err
	}
	if !tel.Exports() {
		return nil, func() {}, nil
	}
	obs := client.NewObserver(0)
	tel.Observe(obs)
	return obs.Replay, func() { obs.Close(); tel.Close(env.Err) }, nil
}

// watchWhat names the server of a capture's header.
func watchWhat(h capture.Header) string {
	if h.URL != "" {
		return h.URL
	}
	return strings.Join(h.Command, " ")
}

// watchTarget finds the recording to follow and the pid of its tap (0
// when not known: a file named on the command line); who is the command
// that asks (sonde watch, sonde inject, sonde faults), which its errors
// name.
func watchTarget(who string, o *WatchOptions, arg string) (string, int, error) {
	dir, err := sessionsDir(o.Dir)
	if err != nil {
		return "", 0, err
	}
	if arg == "" {
		sessions, err := ListSessions(dir)
		if err != nil {
			return "", 0, cmdutil.Usagef(fmt.Sprintf("%s: the sessions folder: %v", who, err))
		}
		for _, s := range sessions {
			if s.Live {
				return s.File, s.TapPID, nil
			}
		}
		return "", 0, cmdutil.Usagef(fmt.Sprintf("%s: no live session in %s (sonde sessions lists them; a host runs sonde tap once sonde wrap set it up)", who, dir))
	}
	path := arg
	if o.Dir == "" {
		if path, err = cmdutil.CaptureArg(arg); err != nil {
			return "", 0, err
		}
	} else if _, err := os.Stat(arg); err != nil {
		path = filepath.Join(dir, strings.TrimSuffix(arg, sessions.Ext)+sessions.Ext)
	}
	id, _ := sessions.Parse(filepath.Base(path))
	return path, id.PID, nil
}
