package answer

import (
	"fmt"
	"net/url"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/list"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// URLRequired shows the URL elicitations of a request the server answered
// with -32042 (URLElicitationRequiredError): which server asks, for which
// request, and each URL with its message, host and elicitation id, marked
// done when the server sends notifications/elicitation/complete for it
// (Complete). sonde never opens a URL: c copies the selected one to the
// clipboard (OSC 52), r asks the owner to retry the request (Retry), esc
// closes the dialog (Later).
type URLRequired struct {
	st     *theme.Styles
	keys   URLRequiredKeyMap
	server string // the server's name and version
	what   string // the request: "tools/call NAME"
	els    []mcp.ElicitParams
	done   []bool
	sel    int
	copied int // the elicitation last copied, or -1
	w, h   int
}

// URLRequiredKeyMap holds the bindings of a URLRequired dialog.
type URLRequiredKeyMap struct {
	// Up and Down select an elicitation.
	Up, Down key.Binding
	// Copy puts the selected URL on the clipboard (OSC 52).
	Copy key.Binding
	// Retry sends the request again, with the same arguments.
	Retry key.Binding
	// Close closes the dialog without retrying.
	Close key.Binding
}

// DefaultURLRequiredKeyMap returns the default bindings.
func DefaultURLRequiredKeyMap() URLRequiredKeyMap {
	nav := list.DefaultKeyMap()
	nav.Up.SetHelp("↑/k", "previous URL")
	nav.Down.SetHelp("↓/j", "next URL")
	return URLRequiredKeyMap{
		Up:    nav.Up,
		Down:  nav.Down,
		Copy:  key.NewBinding(key.WithKeys("y", "c"), key.WithHelp("y", "copy URL")),
		Retry: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry the call")),
		Close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
	}
}

// ShortHelp returns the bindings shown in the help bar.
func (k URLRequiredKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Copy, k.Retry, k.Down, k.Close}
}

// FullHelp returns every binding.
func (k URLRequiredKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Copy}, {k.Retry, k.Close}}
}

// NewURLRequired returns the dialog for the elicitations els (from
// client.URLElicitations) that server (its name and version) sent in answer
// to the request what ("tools/call echo").
func NewURLRequired(st *theme.Styles, server, what string, els []mcp.ElicitParams) *URLRequired {
	keys := DefaultURLRequiredKeyMap()
	keys.Up.SetEnabled(len(els) > 1)
	keys.Down.SetEnabled(len(els) > 1)
	return &URLRequired{st: st, keys: keys, server: server, what: what, els: els, done: make([]bool, len(els)), copied: -1}
}

// Elicitations returns the elicitations shown.
func (d *URLRequired) Elicitations() []mcp.ElicitParams { return d.els }

// Selected returns the index of the selected elicitation.
func (d *URLRequired) Selected() int { return d.sel }

// Complete marks elicitation id done (the server sent
// notifications/elicitation/complete for it); it reports whether the dialog
// shows that id.
func (d *URLRequired) Complete(id string) bool {
	found := false
	for i, e := range d.els {
		if e.ElicitationID == id {
			d.done[i], found = true, true
		}
	}
	return found
}

// Done counts the elicitations marked done.
func (d *URLRequired) Done() int {
	n := 0
	for _, ok := range d.done {
		if ok {
			n++
		}
	}
	return n
}

// Title names the dialog for its border.
func (d *URLRequired) Title() string {
	return "URL required by " + textfmt.Clean(d.server) + " · " + textfmt.Clean(d.what)
}

// Keys returns the dialog's bindings.
func (d *URLRequired) Keys() help.KeyMap { return d.keys }

// Capturing is false: the dialog takes no typing.
func (d *URLRequired) Capturing() bool { return false }

// SetSize sets the inner size of the dialog.
func (d *URLRequired) SetSize(w, h int) { d.w, d.h = w, h }

// Update handles a key; it reports Retry (send the request again, close
// the dialog), Later (close it) or None. Copy returns tea.SetClipboard.
func (d *URLRequired) Update(msg tea.Msg) (Action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return None, nil
	}
	switch {
	case key.Matches(k, d.keys.Up):
		d.sel = list.Clamp(d.sel-1, len(d.els))
	case key.Matches(k, d.keys.Down):
		d.sel = list.Clamp(d.sel+1, len(d.els))
	case key.Matches(k, d.keys.Copy) && len(d.els) > 0:
		d.copied = d.sel
		return None, tea.SetClipboard(d.els[d.sel].URL)
	case key.Matches(k, d.keys.Retry):
		return Retry, nil
	case key.Matches(k, d.keys.Close):
		return Later, nil
	}
	return None, nil
}

// View draws the dialog in the size given to SetSize: a header, the
// elicitations (scrolled so that the selected one is in sight), and a
// footer with the policy and what was copied. Long messages and URLs wrap:
// a URL is shown whole.
func (d *URLRequired) View() string {
	st := d.st
	n := len(d.els)
	what := "1 URL"
	if n != 1 {
		what = fmt.Sprintf("%d URLs", n)
	}
	var head, body, foot lines
	head.add(wrap(textfmt.Clean(d.server)+" asks you to open "+what+" before "+textfmt.Clean(d.what)+" can go on.", d.w, st.Text, ""))
	head.add("")
	selFrom, selTo := 0, 0
	for i, e := range d.els {
		if i > 0 {
			body.add("")
		}
		if i == d.sel {
			selFrom = len(body)
		}
		mark := "  "
		if i == d.sel && n > 1 {
			mark = st.Accent.Render("▸ ")
		}
		state := st.Warn.Render("waiting")
		if d.done[i] {
			state = st.OK.Render("✓ done (the server sent elicitation/complete)")
		}
		body.add(mark + st.Text.Render(fmt.Sprintf("%d/%d ", i+1, n)) + state)
		if e.Message == "" {
			body.add("  " + st.Subtle.Render("(no message)"))
		} else {
			body.add(wrap(textfmt.Clean(e.Message), d.w-2, st.Text, "  "))
		}
		body.add(wrap(textfmt.Clean(e.URL), d.w-2, st.Accent, "  "))
		body.add("  " + st.Subtle.Render("host ") + st.Text.Render(textfmt.Clean(hostOf(e.URL))) +
			st.Subtle.Render(" · elicitation id "+textfmt.Clean(e.ElicitationID)))
		if i == d.sel {
			selTo = len(body)
		}
	}
	if d.copied >= 0 {
		foot.add(st.OK.Render(fmt.Sprintf("URL %d/%d sent to the clipboard (OSC 52, if the terminal allows it)", d.copied+1, n)))
	}
	foot.add(wrap("sonde does not open URLs: open it in a browser and complete it, then r retries the call", d.w, st.Subtle, ""))
	// The body scrolls so that the selected elicitation is in sight.
	room := max(d.h-len(head)-len(foot)-1, 1)
	if len(body) > room {
		top := 0
		if selTo > room {
			top = min(selTo-room, selFrom)
		}
		body = body[top:min(top+room, len(body))]
	}
	out := append(append(append(head, body...), ""), foot...)
	return textfmt.Lines(strings.Join(out, "\n"), d.w, d.h)
}

// lines are the rows of a view being built.
type lines []string

// add appends s, one row per line of it.
func (l *lines) add(s string) { *l = append(*l, strings.Split(s, "\n")...) }

// wrap breaks s (plain text, already cleaned) into rows of at most w cells,
// at spaces where it can and anywhere else when it must (a URL), styles
// each row and puts prefix before it.
func wrap(s string, w int, style lipgloss.Style, prefix string) string {
	rows := strings.Split(ansi.Hardwrap(ansi.Wordwrap(s, max(w, 1), ""), max(w, 1), true), "\n")
	for i, r := range rows {
		rows[i] = prefix + style.Render(r)
	}
	return strings.Join(rows, "\n")
}

// hostOf is the host of an elicitation's URL, which the spec asks a client
// to show clearly.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "?"
	}
	return u.Host
}
