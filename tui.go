package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"

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

// sessions tracks every client the UI started, so that none outlives the
// program, even one whose restart was still under way when the user quit.
type sessions struct {
	mu      sync.Mutex
	clients []*client.Client
	closed  bool
}

func (s *sessions) add(c *client.Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.clients = append(s.clients, c)
	return true
}

func (s *sessions) closeAll() {
	s.mu.Lock()
	s.closed = true
	cs := s.clients
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// runTUI runs the interactive UI against the server argv; with withLesson,
// the demo's lesson pane too.
func runTUI(ctx context.Context, io streams, f *tuiFlags, argv []string, withLesson bool) error {
	copts, cfg, err := f.clientConfig(argv)
	if err != nil {
		return err
	}
	var all sessions
	defer all.closeAll()
	start := func() (ui.Session, error) {
		c := client.New(copts)
		sub := c.Subscribe(1 << 16)
		if !all.add(c) {
			c.Close()
			return ui.Session{}, errors.New("sonde is quitting")
		}
		if err := c.Connect(client.Stdio(cfg)); err != nil {
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
		Start: start, First: &first, Transport: "stdio", Command: strings.Join(argv, " "),
		Palette: palette, NoColor: noColor, FrameCapacity: f.frames,
	}
	if withLesson {
		opts.Lesson = func(st *theme.Styles) ui.Lesson { return lesson.New(st, lesson.Options{}) }
	}
	p := tea.NewProgram(ui.New(opts), tea.WithContext(ctx), tea.WithInput(io.in), tea.WithOutput(io.out))
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return &exitStatus{code: exitInterrupted, msg: "interrupted"}
	}
	return err
}
