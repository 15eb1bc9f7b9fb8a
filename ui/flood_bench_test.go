package ui

import (
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// floodProbe wraps the root model in a real tea.Program to time a key
// under a flood: from the key's Send to the View that follows its Update
// (the renderer then flushes that view within one frame, 1/60 s).
type floodProbe struct {
	m      *Model
	frames atomic.Int64  // frame events that reached Update
	missed atomic.Uint64 // events the pump's subscription missed so far
	ready  atomic.Bool   // the handshake's answer reached Update

	mu      sync.Mutex
	sent    time.Time
	applied bool
	seen    chan time.Duration
}

func (p *floodProbe) Init() tea.Cmd { return p.m.Init() }

func (p *floodProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case eventsMsg:
		p.missed.Store(msg.missed)
		for _, ev := range msg.evs {
			if ev.Kind == client.EvFrame {
				p.frames.Add(1)
				if ev.Frame.Dir == client.In && ev.Frame.Verdict == client.VerdictResolved {
					p.ready.Store(true)
				}
			}
		}
	case tea.KeyPressMsg:
		p.mu.Lock()
		p.applied = !p.sent.IsZero()
		p.mu.Unlock()
	}
	_, cmd := p.m.Update(msg)
	return p, cmd
}

func (p *floodProbe) View() tea.View {
	v := p.m.View()
	p.mu.Lock()
	if p.applied {
		p.seen <- time.Since(p.sent)
		p.sent, p.applied = time.Time{}, false
	}
	p.mu.Unlock()
	return v
}

// BenchmarkKeyUnderFlood: the whole UI in a real tea.Program (its input
// closed, its output discarded, 160x45) on the fixture, whose every echo
// call is preceded by 20,000 notifications while a driver calls echo in a
// loop; each iteration presses ? and waits for the view that shows it.
// Reports the key-to-view time (p50, max) and the frames per second the
// UI took in meanwhile, and the events it missed (fell behind);
// issue 18's goal is key-to-screen ≤ 100 ms under
// 100k frames/s (the renderer adds at most a frame, 17 ms).
func BenchmarkKeyUnderFlood(b *testing.B) {
	cfg := capturetest.Stdio(b, "--fault", "notification-flood", "--flood-count", "20000")
	clients := make(chan *client.Client, 1)
	start := func() (Conn, error) {
		c := client.New(client.Options{Timeout: time.Minute})
		sub := c.Subscribe(1 << 16)
		if err := c.Connect(client.Stdio(cfg)); err != nil {
			return Conn{}, err
		}
		clients <- c
		return Conn{Client: c, Sub: sub}, nil
	}
	p := &floodProbe{m: New(Options{Start: start, Palette: theme.NoColor(), NoColor: true}), seen: make(chan time.Duration, 1)}
	prog := tea.NewProgram(p, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(160, 45), tea.WithoutSignals())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = prog.Run() }()
	c := <-clients
	defer func() { prog.Quit(); <-done; c.Close() }()
	for deadline := time.Now().Add(20 * time.Second); !p.ready.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("no handshake within 20s")
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	var driver sync.WaitGroup
	driver.Go(func() {
		for ctx.Err() == nil {
			_, _, _ = c.CallTool(ctx, "echo", []byte(`{"value":"x"}`), client.CallOptions{})
		}
	})
	defer func() { stop(); driver.Wait() }()
	time.Sleep(500 * time.Millisecond) // the flood under way
	var lat []time.Duration
	f0, m0, t0 := p.frames.Load(), p.missed.Load(), time.Now()
	for b.Loop() {
		p.mu.Lock()
		p.sent = time.Now()
		p.mu.Unlock()
		prog.Send(uitest.Press("?"))
		select {
		case d := <-p.seen:
			lat = append(lat, d)
		case <-time.After(10 * time.Second):
			b.Fatal("the key was not shown within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rate := float64(p.frames.Load()-f0) / time.Since(t0).Seconds()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms/key-p50")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ms/key-max")
	b.ReportMetric(rate, "frames/s")
	// Events the UI's subscription dropped because Update fell behind (the
	// client never waits for the UI): 0 means it kept up.
	b.ReportMetric(float64(p.missed.Load()-m0), "missed")
}
