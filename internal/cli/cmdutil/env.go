// Package cmdutil is what sonde's command families share: the Env of a run
// (its streams, and what it learnt), the exit statuses and the errors that
// carry them, the output helpers (JSON lines, tables, tool results, the URLs
// of a URL elicitation), sonde's version, and the registry of the clients
// a run started.
package cmdutil

import (
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/term"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Env is the environment of one run of the command line: its standard
// streams (tests pass buffers), and what the run learnt on the way.
//
// What a command prints goes to Out and Err. When one of them is a
// terminal, it is a textfmt.TerminalWriter over it: nothing a server sends
// (a tool's text, an error message, its stderr) can act on the terminal,
// whichever command prints it. To a pipe or a file, and after SetRaw
// (--raw), the bytes go as they are. Screen is the terminal itself, for
// the full-screen UI, which escapes what it draws.
type Env struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Screen io.Writer

	rawOut, rawErr io.Writer

	// server is the name and version of the server the run last
	// completed a handshake with, for what Main prints after the command.
	server string

	mu    sync.Mutex
	grant string   // the OAuth grant of the run's last authorization, and why
	hide  []string // secret values Hidden replaces (HideSecrets)
}

// NewEnv is the Env of a run on these streams (see Env for what reaches a
// terminal).
func NewEnv(in io.Reader, out, err io.Writer) *Env {
	return &Env{In: in, Out: guard(out), Err: guard(err), Screen: out, rawOut: out, rawErr: err}
}

// SetRaw makes Out and Err the streams themselves (--raw): a server's
// bytes reach the terminal as they are.
func (e *Env) SetRaw() { e.Out, e.Err = e.rawOut, e.rawErr }

// guard is w behind a TerminalWriter when w is a terminal.
func guard(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return textfmt.NewTerminalWriter(w)
	}
	return w
}

// SetServer records the server (name and version) the run completed a
// handshake with.
func (e *Env) SetServer(name string) { e.server = name }

// SetAuthGrant records which OAuth grant the run's last authorization
// ran, and why (--oauth): the flow tells it from its own goroutine.
func (e *Env) SetAuthGrant(grant string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.grant = grant
}

// HideSecrets adds values (what a config entry's references brought into
// its command line or URL) that Hidden replaces: Main's error line quotes
// messages that may hold them.
func (e *Env) HideSecrets(vals ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range vals {
		if v != "" {
			e.hide = append(e.hide, v)
		}
	}
}

// Hidden is s with every value of HideSecrets replaced by «redacted».
func (e *Env) Hidden(s string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.hide {
		s = strings.ReplaceAll(s, v, "«redacted»")
	}
	return s
}

// AuthGrant is the OAuth grant of the run's last authorization, and why
// ("" when none ran).
func (e *Env) AuthGrant() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.grant
}

// ServerName is the server the run last completed a handshake with (""
// if none).
func (e *Env) ServerName() string { return e.server }

// ErrTerminal is stderr itself when it is a terminal (nil otherwise): for
// a live display that redraws its lines with \r and cursor movements,
// which must escape whatever server text it shows (textfmt.Escape).
func (e *Env) ErrTerminal() io.Writer {
	if f, ok := e.rawErr.(*os.File); ok && term.IsTerminal(f.Fd()) {
		return f
	}
	return nil
}
