package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/lesson"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// tuiFlags are the flags of the interactive UI on top of the server flags.
type tuiFlags struct {
	serverFlags
	frames int
}

func (f *tuiFlags) register(cmd *cobra.Command) {
	f.serverFlags.register(cmd.Flags())
	cmd.Flags().IntVar(&f.frames, "frames", 20000, "frames kept in the Frames pane (older ones are evicted and counted)")
	for _, hidden := range []string{"json", "trace"} {
		_ = cmd.Flags().MarkHidden(hidden)
	}
}

// runTUI runs the interactive UI against the server argv; with lessonOpts,
// the demo's lesson pane too.
func runTUI(ctx context.Context, io streams, f *tuiFlags, argv []string, lessonOpts *lesson.Options) error {
	copts, cfg, err := f.clientConfig(argv)
	if err != nil {
		return err
	}
	// The user answers the server's requests in the UI's dialogs, so the UI
	// declares every client capability; reply files still answer first. In the
	// modern era the input requests of input_required results open the same
	// dialogs (Interactive).
	sr := &copts.ServerRequests
	sr.Roots, sr.Sampling, sr.Elicitation, sr.Interactive = true, true, true, true
	// The UI owns the terminal: the OAuth flow's authorization URL goes to
	// a dialog (the program exists by the time a server answers 401).
	var prog atomic.Pointer[tea.Program]
	f.promptURL = func(authURL string) {
		if p := prog.Load(); p != nil {
			p.Send(ui.AuthorizeMsg{URL: authURL, Wait: f.oauthTimeout})
		}
	}
	dial, transportName, what, err := f.dialer(cfg)
	if err != nil {
		return err
	}
	rec, err := f.recordSwitch(argv)
	if err != nil {
		return err
	}
	// Every client the UI starts is closed when it ends, even one whose
	// restart was still under way when the user quit; then the recording
	// under way ends.
	all := liveFrom(ctx)
	defer func() {
		all.closeAll()
		if path, sum, ok := rec.Stop(); ok {
			reportCapture(io.err, path, sum)
		} else if _, _, note := rec.State(); note != "" {
			fmt.Fprintln(io.err, "sonde: "+note)
		}
	}()
	start := func() (ui.Session, error) {
		c := client.New(copts)
		sub := c.Subscribe(1 << 16)
		rec.Follow(c)
		if !all.add(c) {
			c.Close()
			return ui.Session{}, errors.New("sonde is quitting")
		}
		if err := c.Connect(dial); err != nil {
			c.Close()
			return ui.Session{}, err
		}
		return ui.Session{Client: c, Sub: sub}, nil
	}
	// A server that cannot be started is reported like in every other
	// command (MCP_SPAWN, exit 7) before the UI takes the terminal.
	first, err := start()
	if err != nil {
		return err
	}
	noColor := os.Getenv("NO_COLOR") != ""
	palette := theme.Dark()
	if noColor {
		palette = theme.NoColor()
	}
	opts := ui.Options{
		Start: start, First: &first, Transport: transportName, Command: what,
		Palette: palette, NoColor: noColor, FrameCapacity: f.frames, Reconnect: f.reconnect,
		Recorder: rec,
	}
	if lessonOpts != nil {
		lo := *lessonOpts
		lo.Modern = modernLesson(f, argv, copts, all)
		opts.Lesson = func(st *theme.Styles) ui.Lesson { return lesson.New(st, lo) }
	}
	p := tea.NewProgram(ui.New(opts), tea.WithContext(ctx), tea.WithInput(io.in), tea.WithOutput(io.out))
	prog.Store(p)
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return &exitStatus{code: exitInterrupted, msg: "interrupted"}
	}
	return err
}

// modernLesson starts, for the lesson's eras step, the same server command
// with --era modern (sonde's fixture), as a modern client that declares
// elicitation and accepts what it is asked. Over --url there is none.
func modernLesson(f *tuiFlags, argv []string, copts client.Options, all *liveClients) lesson.ModernFunc {
	if f.url != "" {
		return nil
	}
	_, cfg, err := f.clientConfig(append(append([]string(nil), argv...), "--era", "modern"))
	if err != nil {
		return nil
	}
	return func() (*client.Client, client.Dialer, error) {
		o := copts
		o.Era, o.Inputs = client.EraModern, lesson.Accept
		o.ServerRequests = client.ServerRequests{Elicitation: true} // answered by Accept
		c := client.New(o)
		if !all.add(c) {
			c.Close()
			return nil, nil, errors.New("sonde is quitting")
		}
		return c, client.Stdio(cfg), nil
	}
}
