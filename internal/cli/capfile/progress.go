package capfile

import (
	"fmt"
	"io"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// progressEvery is how many events go by between two progress updates.
const progressEvery = 100_000

// progress shows, on a terminal's stderr only, how far the reading of a
// long capture has come: one line rewritten in place, erased at the end.
// Piped, or with machine output, it shows nothing.
type progress struct {
	w     io.Writer // nil: quiet
	path  string
	n     int
	shown bool
}

// newProgress shows progress on env's terminal stderr unless quiet.
func newProgress(env *cmdutil.Env, path string, quiet bool) *progress {
	p := &progress{path: path}
	if !quiet {
		p.w = env.ErrTerminal()
	}
	return p
}

// tick counts one event.
func (p *progress) tick() {
	p.n++
	if p.w != nil && p.n%progressEvery == 0 {
		fmt.Fprintf(p.w, "\rsonde: reading %s: %d events…", textfmt.Escape(p.path), p.n)
		p.shown = true
	}
}

// done erases the line, if one was shown.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
