package timeline

import (
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/list"
)

// KeyMap holds the pane's bindings.
type KeyMap struct {
	// KeyMap scrolls the rows (g: the oldest shown, G: the newest).
	list.KeyMap
	ZoomIn, ZoomOut, PanBack, PanOn, Follow key.Binding
	// Filter types a query (the filter language); Accept keeps it, Clear
	// drops it.
	Filter, Accept, Clear key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		KeyMap:  list.DefaultKeyMap().WithEnds("oldest rows", "newest rows"),
		ZoomIn:  list.Bind("]", "zoom in", "]"),
		ZoomOut: list.Bind("[", "zoom out", "["),
		PanBack: list.Bind("h", "pan back", "h"),
		PanOn:   list.Bind("l", "pan on", "l"),
		Follow:  list.Bind("f", "follow now", "f"),
		Filter:  list.Bind("/", "filter", "/"),
		Accept:  list.Bind("enter", "keep filter", "enter"),
		Clear:   list.Bind("esc", "clear filter", "esc"),
	}
}

// ShortHelp lists the main bindings.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.ZoomIn, k.ZoomOut, k.PanBack, k.PanOn, k.Follow, k.Filter, k.Accept, k.Clear}
}

// FullHelp lists every binding.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{k.Bindings(), {k.ZoomIn, k.ZoomOut, k.PanBack, k.PanOn, k.Follow}, {k.Filter, k.Accept, k.Clear}}
}

// Keys returns the pane's key map, with the bindings of the current mode
// enabled: while a query is typed, only enter and esc.
func (m *Model) Keys() help.KeyMap {
	k := &m.keys
	typing := m.q.Typing
	k.KeyMap.SetEnabled(!typing)
	for _, b := range []*key.Binding{&k.ZoomIn, &k.ZoomOut, &k.PanBack, &k.PanOn, &k.Follow, &k.Filter} {
		b.SetEnabled(!typing)
	}
	k.Accept.SetEnabled(typing)
	k.Clear.SetEnabled(typing || m.q.Active())
	return m.keys
}

// Widths the zoom steps through.
var zooms = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour}

// Update handles the keys and the mouse wheel (up zooms in, down out).
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := m.keys
		if m.q.Typing {
			_, cmd := m.q.Key(msg, k.Accept, k.Clear)
			return cmd
		}
		if d, ok := k.Delta(msg, max(m.rows(), 1)); ok {
			m.row = max(m.row-d, 0) // down shows newer rows
			if d == list.Far {
				m.row = 0
			}
			return nil
		}
		switch {
		case key.Matches(msg, k.ZoomIn):
			m.zoom(-1)
		case key.Matches(msg, k.ZoomOut):
			m.zoom(1)
		case key.Matches(msg, k.PanBack):
			m.pan(-m.width / 4)
		case key.Matches(msg, k.PanOn):
			m.pan(m.width / 4)
		case key.Matches(msg, k.Follow):
			m.follow, m.row = true, 0
		case key.Matches(msg, k.Filter):
			return m.q.Open()
		case key.Matches(msg, k.Clear):
			m.q.Set("")
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.zoom(-1)
		case tea.MouseWheelDown:
			m.zoom(1)
		}
	}
	return nil
}

// zoom steps the window's width through zooms.
func (m *Model) zoom(d int) {
	i := sortIndex(m.width)
	m.width = zooms[max(min(i+d, len(zooms)-1), 0)]
}

func sortIndex(w time.Duration) int {
	for i, z := range zooms {
		if z >= w {
			return i
		}
	}
	return len(zooms) - 1
}

// pan moves the window; it stops following now, and follows again once
// it reaches now.
func (m *Model) pan(d time.Duration) {
	_, to := m.window()
	to = to.Add(d)
	if !to.Before(m.now) {
		m.follow = true
		return
	}
	m.follow, m.right = false, to
}

func isErrorResult(f *client.FrameInfo) bool { return mcp.ResultIsError(f.Msg.Result) }
