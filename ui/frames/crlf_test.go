package frames

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// crlfSession is session() as a server that ends its lines with "\r\n"
// sends it: every frame from the server keeps a "\r" at the end of its raw
// bytes (the transport keeps it; the decoder ignores it).
func crlfSession() []client.Event {
	evs := session()
	for i, ev := range evs {
		if f := ev.Frame; f.Dir == client.In {
			evs[i] = frameEv(ev.Seq, ev.Time.Sub(start), client.In, string(f.Raw)+"\r", f.Verdict, f.Detail)
		}
	}
	return evs
}

// TestCRLFFramesKeepTheLayout: a "\r" at the end of every server frame
// never reaches the terminal (where it would move the cursor to the start
// of the line and break the row): the list and the detail view stay exactly
// w×h cells, and the detail view shows the "\r" escaped, as it was.
func TestCRLFFramesKeepTheLayout(t *testing.T) {
	for _, w := range []int{20, 78, 160} {
		for _, h := range []int{3, 20} {
			for _, mode := range []string{"list", "detail"} {
				m := New(theme.New(theme.Dark()), Options{})
				m.SetSize(w, h)
				m.Apply(crlfSession())
				if mode == "detail" {
					selectSeq(m, 2)
					press(m, "enter")
				}
				name := fmt.Sprintf("%s %dx%d", mode, w, h)
				v := m.View()
				if strings.Contains(v, "\r") {
					t.Errorf("%s: a raw \\r reached the view", name)
				}
				checkSize(t, name, v, w, h)
			}
		}
	}
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(160, 40)
	m.Apply(crlfSession())
	selectSeq(m, 2)
	press(m, "enter")
	v := ansi.Strip(m.View())
	for _, want := range []string{`"serverInfo": {`, `line ended with \r (CRLF)`, `"version":"1.0"}}}\r`} {
		if !strings.Contains(v, want) {
			t.Errorf("detail view lacks %q:\n%s", want, v)
		}
	}
}
