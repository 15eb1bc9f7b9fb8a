package stderr

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/internal/uitest"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// scene is two runs of a server: the first crashes, the second is still
// writing a line; the tail is small enough that the start was dropped.
func scene(m *Model) {
	long := "DEBUG " + strings.Repeat("payload=0123456789abcdef ", 9) + "end"
	m.Apply([]client.Event{
		chunk(strings.Repeat("warming up cache shard\n", 40)),
		start(4242, "python3", "-m", "weather_server", "--verbose"),
		chunk("\x1b[32mINFO\x1b[0m  server ready on stdio\n"),
		chunk("INFO  tools: get_forecast, get_alerts\r\n"),
		chunk(long + "\n"),
		chunk("WARN  \tslow upstream: 2.4s\n"),
		chunk("Traceback (most recent call last):\n  File \"server.py\", line 88, in handle\nKeyError: 'lat'\n"),
		exit(4242, 3, "", false),
		start(4250, "python3", "-m", "weather_server", "--verbose"),
		chunk("\x1b[32mINFO\x1b[0m  server ready on stdio\n"),
		chunk("progress: 40% \x07\rprogress: 80%"),
	})
}

func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{78, 20}, {118, 36}} {
		for _, wrap := range []bool{false, true} {
			m := New(theme.New(theme.NoColor()), Options{Bytes: 1200})
			m.SetSize(size[0], size[1])
			scene(m)
			name := fmt.Sprintf("tail_%dx%d", size[0], size[1])
			if wrap {
				m.Update(press("w"))
				name += "_wrap"
			}
			golden.Assert(t, name, ansi.Strip(m.View()))
		}
	}
}

func TestViewSize(t *testing.T) {
	for _, size := range [][2]int{{78, 20}, {118, 36}, {12, 3}, {1, 1}, {200, 2}} {
		for _, palette := range []theme.Palette{theme.NoColor(), theme.Dark()} {
			for _, keys := range []string{"", "w", "wk", "g", "wgjj"} {
				m := New(theme.New(palette), Options{Bytes: 1200})
				m.SetSize(size[0], size[1])
				scene(m)
				for _, k := range keys {
					m.Update(press(string(k)))
				}
				if err := uitest.ScreenSize(m.View(), size[0], size[1]); err != nil {
					t.Fatalf("%q: %v", keys, err)
				}
			}
		}
	}
}

func TestEmpty(t *testing.T) {
	m := newModel(Options{}, 30, 2)
	if got := screen(m); got[0] != "nothing on stderr yet" {
		t.Fatalf("screen = %q", got)
	}
	m.Update(press("k"))
	m.Update(press("w"))
	m.Update(press("pgdown"))
	if got := screen(m); got[0] != "nothing on stderr yet" {
		t.Fatalf("screen = %q", got)
	}
}

// events returns n stderr events of one line each.
func events(n int) []client.Event {
	evs := make([]client.Event, n)
	for i := range evs {
		evs[i] = chunk("2025-06-01T12:00:00Z INFO handled request id=" + strconv.Itoa(i) + "\n")
	}
	return evs
}

func BenchmarkApply(b *testing.B) {
	evs := events(100_000)
	b.ReportAllocs()
	for b.Loop() {
		m := New(theme.New(theme.Dark()), Options{})
		m.Apply(evs)
	}
}

func BenchmarkView(b *testing.B) {
	uitest.BenchView(b, "history", func(b *testing.B, n int) func() {
		// A budget that holds everything, so the ring really has n lines.
		m := New(theme.New(theme.Dark()), Options{Bytes: 1 << 30})
		m.SetSize(118, 36)
		m.Apply(events(n))
		m.Update(press("w"))
		m.Update(press("k")) // scrolled, in the middle of the history
		m.top = pos{m.first() + uint64(n/2), 0}
		return func() { _ = m.View() }
	})
}
