package ui

import (
	"time"

	"github.com/sonde-mcp/sonde/ui/answer"
)

// AuthorizeMsg asks the UI to show the authorization URL of sonde's OAuth
// flow (--oauth): the server answered 401 and the flow waits, up to Wait,
// for the browser's redirect. The program's owner sends it from the flow's
// prompt (oauth.Config.Prompt), which runs outside Update.
type AuthorizeMsg struct {
	URL  string
	Wait time.Duration
	// Grant says which grant runs and why (oauth.Config.OnGrant),
	// "" when unknown.
	Grant string
}

// showAuthorize opens the authorization dialog, at once or, when another
// dialog is open, once it closes (openNextAsk).
func (m *Model) showAuthorize(msg AuthorizeMsg) {
	m.auth, m.authHidden = answer.NewAuthorize(m.styles, msg.URL, msg.Wait, msg.Grant), false
	if m.dlg == nil {
		m.openDialog(m.auth)
	}
}

// endAuthorize closes the authorization dialog: the handshake it waited
// for has ended (connected, or failed).
func (m *Model) endAuthorize() {
	if m.auth == nil {
		return
	}
	if m.dlg == dialog(m.auth) {
		m.dlg = nil
	}
	m.auth = nil
	m.openNextAsk()
}
