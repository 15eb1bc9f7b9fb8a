package doctor

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// progress is the live display on a terminal: one line per server with
// its current step, redrawn in place (cursor up, carriage return, erase
// line). Every line is escaped: server names come from config files.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	lines []string
	names []string
	drawn bool
}

func newProgress(w io.Writer, servers []hostconfig.Server) *progress {
	p := &progress{w: w}
	for _, s := range servers {
		p.names = append(p.names, textfmt.Escape(s.Name)+" ("+s.Host+")")
		p.lines = append(p.lines, "waiting")
	}
	p.draw()
	return p
}

// set shows server i's current step.
func (p *progress) set(i int, step string) {
	if step == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lines[i] = step + "…"
	p.drawLocked()
}

// done shows server i's outcome.
func (p *progress) done(i int, r *Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := r.failure(); f != nil {
		p.lines[i] = "FAIL at " + f.Name
	} else {
		p.lines[i] = "ok"
	}
	p.drawLocked()
}

// stop clears the display, for the summary.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\x1b[%dA\r\x1b[J", len(p.lines))
	}
	p.drawn = false
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drawLocked()
}

func (p *progress) drawLocked() {
	var b strings.Builder
	if p.drawn {
		fmt.Fprintf(&b, "\x1b[%dA", len(p.lines))
	}
	for i, l := range p.lines {
		b.WriteString("\r\x1b[K  " + strings.TrimRight(textfmt.Fit(p.names[i]+": "+l, 100), " ") + "\n")
	}
	_, _ = io.WriteString(p.w, b.String())
	p.drawn = true
}
