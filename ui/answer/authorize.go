package answer

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Authorize shows the authorization URL of sonde's OAuth flow (--oauth):
// the server answered 401, and sonde waits for the browser's redirect to
// its loopback listener. sonde never opens the URL: y copies it (OSC 52),
// esc hides the dialog (the flow keeps waiting until its timeout). The
// owner closes it when the handshake ends.
type Authorize struct {
	st     *theme.Styles
	keys   AuthorizeKeyMap
	url    string
	wait   time.Duration
	grant  string
	copied bool
	w, h   int
}

// AuthorizeKeyMap holds the bindings of an Authorize dialog.
type AuthorizeKeyMap struct {
	// Copy puts the URL on the clipboard (OSC 52).
	Copy key.Binding
	// Close hides the dialog; the flow goes on waiting.
	Close key.Binding
}

// ShortHelp returns the bindings shown in the help bar.
func (k AuthorizeKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Copy, k.Close} }

// FullHelp returns every binding.
func (k AuthorizeKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Copy, k.Close}} }

// NewAuthorize returns the dialog for authURL; wait is how long the flow
// waits for the redirect (--oauth-timeout); grant says which grant runs
// and why ("" when unknown).
func NewAuthorize(st *theme.Styles, authURL string, wait time.Duration, grant string) *Authorize {
	return &Authorize{st: st, url: authURL, wait: wait, grant: grant, keys: AuthorizeKeyMap{
		Copy:  key.NewBinding(key.WithKeys("y", "c"), key.WithHelp("y", "copy URL")),
		Close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "hide (sonde keeps waiting)")),
	}}
}

// URL returns the authorization URL shown.
func (d *Authorize) URL() string { return d.url }

// Title names the dialog for its border.
func (d *Authorize) Title() string { return "Authorize sonde (OAuth)" }

// Keys returns the dialog's bindings.
func (d *Authorize) Keys() help.KeyMap { return d.keys }

// Capturing is false: the dialog takes no typing.
func (d *Authorize) Capturing() bool { return false }

// SetSize sets the inner size of the dialog.
func (d *Authorize) SetSize(w, h int) { d.w, d.h = w, h }

// Update handles a key: y copies the URL (tea.SetClipboard), esc reports
// Later.
func (d *Authorize) Update(msg tea.Msg) (Action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return None, nil
	}
	switch {
	case key.Matches(k, d.keys.Copy):
		d.copied = true
		return None, tea.SetClipboard(d.url)
	case key.Matches(k, d.keys.Close):
		return Later, nil
	}
	return None, nil
}

// View draws the dialog: what is asked, the URL whole (wrapped), the
// policy and whether it was copied.
func (d *Authorize) View() string {
	st := d.st
	w := max(d.w, 10)
	var l lines
	l.add(wrap(fmt.Sprintf("The server answered 401: it wants an OAuth token. Open this URL in a browser and sign in; sonde waits up to %v for the browser's redirect to its loopback listener, then connects with the token.", d.wait), w, st.Text, ""))
	if d.grant != "" {
		l.add("")
		l.add(wrap("Grant: "+textfmt.Clean(d.grant)+".", w, st.Subtle, ""))
	}
	l.add("")
	// The URL is cut at the width, not at its hyphens: full rows.
	l.add(st.Accent.Render(ansi.Hardwrap(textfmt.Clean(d.url), w, true)))
	l.add("")
	note := "sonde does not open URLs: y copies it (OSC 52, where the terminal allows it)"
	if d.copied {
		note = "copied to the clipboard (where the terminal allows it)"
	}
	l.add(wrap(note, w, st.Subtle, ""))
	return textfmt.Lines(strings.Join(l, "\n"), d.w, d.h)
}
