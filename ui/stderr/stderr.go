// Package stderr draws the tail of the server's stderr in sonde's TUI: a
// bounded ring of lines (the oldest bytes are dropped, and counted, when the
// tail is full), with a separator line each time the server process starts,
// is signalled by sonde, or exits, so one tail spans restarts.
//
// What servers write is never interpreted: ANSI escape sequences are
// stripped and other control characters are shown escaped (see sanitize).
// The pane follows new output by default and returns no messages.
package stderr

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/ring"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Options configure a Model. Zero values mean the defaults.
type Options struct {
	// Bytes bounds the tail (default 64 KiB). Separator lines count too.
	Bytes int
}

type kind uint8

const (
	kText   kind = iota // a line of stderr
	kSep                // a process separator
	kSepErr             // a separator for a failure (non-zero exit, spawn failure)
)

// line is one line of the tail.
type line struct {
	kind kind
	text string // sanitized text, or the separator's label
	size int    // bytes counted against the budget
	srv  string // the server that wrote it, when the pane shows several (SetTag)
}

// pos is a scroll position: an absolute line number (see Model.first) and a
// row within that line when it is soft-wrapped.
type pos struct {
	line uint64
	sub  int
}

// Model is the stderr pane.
type Model struct {
	st    *theme.Styles
	opts  Options
	keys  KeyMap
	w, h  int
	lines ring.Ring[line]
	// lines are bounded by the byte budget (trim), not by the ring (New);
	// first() numbers them.
	partial []byte // the incomplete last line
	ptext   string // sanitize(partial), when !pdirty
	pdirty  bool
	held    int // bytes held: lines plus partial
	sepHeld int // of which separator bytes
	dropped int64
	exit    string // how the last process ended ("" while one runs)
	follow  bool
	wrap    bool
	top     pos // first visible row when not following
	// tag is the server whose events Apply folds (SetTag), ptag the server
	// of the partial line, only the server whose lines are shown ("":
	// all), tagW the widest tag seen (the SERVER column's width).
	tag, ptag, only string
	tagW            int
}

// New returns an empty pane that follows new output; Options are optional (only
// the first is used).
func New(st *theme.Styles, options ...Options) *Model {
	var opts Options
	if len(options) > 0 {
		opts = options[0]
	}
	if opts.Bytes <= 0 {
		opts.Bytes = 64 << 10
	}
	// Every line counts at least one byte against the budget, so trim
	// keeps the ring well under this capacity: it never evicts.
	return &Model{st: st, opts: opts, keys: DefaultKeyMap(), lines: ring.New[line](2*opts.Bytes + 2), follow: true}
}

// first is the absolute number of lines.At(0), counting from 1; it grows
// as lines are dropped, so a scroll position survives eviction. Line
// first()-1 is the "dropped" marker when anything was dropped.
func (m *Model) first() uint64 { return 1 + m.lines.Evicted() }

// SetSize sets the inner size in cells.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetNow is part of the pane contract; the tail does not depend on time.
func (m *Model) SetNow(time.Time) {}

// Capturing is always false: the pane has no text input.
func (m *Model) Capturing() bool { return false }

// Reset keeps everything: the tail spans restarts, and the "start" and
// "exit" separators that Apply receives mark where each process begins and
// ends.
func (m *Model) Reset() {}

// SetTag says which server the events Apply folds next come from, when
// the pane shows the stderr of several: each line is tagged with its
// server (a column dropped at narrow widths). "" (the default) is one
// server. A line one server had not finished when another wrote ends
// there (the rest follows as a line of its own).
func (m *Model) SetTag(server string) {
	m.tag = server
	m.tagW = min(max(m.tagW, ansi.StringWidth(textfmt.Escape(server))), 16)
}

// SetServer shows only the lines of server ("" shows every server's);
// the title says which.
func (m *Model) SetServer(server string) {
	if server != m.only {
		m.only = server
		m.top.sub = 0
	}
}

// Title is "stderr" and the size held, plus " · N dropped" once bytes were
// dropped and " · exit code 3" (or " · signal SIGKILL") after an exit.
func (m *Model) Title() string {
	s := "stderr " + textfmt.Size(m.held-m.sepHeld)
	if m.only != "" {
		s += " · server " + textfmt.Clean(m.only)
	}
	if m.dropped > 0 {
		s += " · " + textfmt.Size(int(m.dropped)) + " dropped"
	}
	if m.exit != "" {
		s += " · " + m.exit
	}
	return s
}

// Apply folds stderr chunks and process events into the tail.
func (m *Model) Apply(evs []client.Event) {
	for i := range evs {
		switch ev := &evs[i]; ev.Kind {
		case client.EvStderr:
			if m.ptag != m.tag {
				m.endPartial() // another server's unfinished line
			}
			m.ptag = m.tag
			m.write(ev.Stderr)
		case client.EvProcess:
			if ev.Proc != nil {
				m.process(ev.Proc)
			}
		}
	}
}

// write appends a chunk of stderr, splitting it into lines.
func (m *Model) write(b []byte) {
	if over := len(b) - m.opts.Bytes; over >= 0 { // the chunk alone fills the tail
		m.dropAll()
		cut := over
		for cut < len(b) && !utf8.RuneStart(b[cut]) {
			cut++
		}
		m.dropped += int64(cut)
		b = b[cut:]
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			m.partial = append(m.partial, b...)
			m.held += len(b)
			m.pdirty = true
			break
		}
		seg := b[:i]
		if len(m.partial) > 0 {
			m.held -= len(m.partial)
			seg = append(m.partial, seg...)
			m.partial, m.pdirty = m.partial[:0], true
		}
		m.push(line{kind: kText, text: sanitize(seg), size: len(seg) + 1, srv: m.tag})
		b = b[i+1:]
	}
	m.trim()
}

func (m *Model) push(l line) {
	if old, evicted := m.lines.Push(l); evicted { // not while trim keeps the budget (see New)
		m.forget(old)
	}
	m.held += l.size
	if l.kind != kText {
		m.sepHeld += l.size
	}
}

// trim drops the oldest lines, then the head of the partial line, until the
// tail fits its budget.
func (m *Model) trim() {
	// The newest line stays even when it alone is over budget: that is by
	// one byte at most (a partial line already cut, then its newline), or a
	// separator under a tiny budget.
	for m.held > m.opts.Bytes && (m.lines.Len() > 1 || m.lines.Len() == 1 && len(m.partial) > 0) {
		m.dropLine()
	}
	if over := min(m.held-m.opts.Bytes, len(m.partial)); over > 0 {
		for over < len(m.partial) && !utf8.RuneStart(m.partial[over]) {
			over++
		}
		m.partial = append(m.partial[:0], m.partial[over:]...)
		m.held -= over
		m.dropped += int64(over)
		m.pdirty = true
	}
	if cap(m.partial) > 2*m.opts.Bytes { // do not keep a huge backing array
		m.partial = append([]byte(nil), m.partial...)
	}
}

func (m *Model) dropLine() {
	l, _ := m.lines.DropOldest()
	m.forget(l)
}

// forget counts a line that has left the ring.
func (m *Model) forget(l line) {
	m.held -= l.size
	if l.kind == kText {
		m.dropped += int64(l.size)
	} else {
		m.sepHeld -= l.size
	}
}

func (m *Model) dropAll() {
	for m.lines.Len() > 0 {
		m.dropLine()
	}
	m.dropped += int64(len(m.partial))
	m.held -= len(m.partial)
	m.partial, m.pdirty = m.partial[:0], true
}

// endPartial turns an incomplete last line into a line, so a separator
// starts on a line of its own.
func (m *Model) endPartial() {
	if len(m.partial) == 0 {
		return
	}
	m.held -= len(m.partial)
	m.push(line{kind: kText, text: sanitize(m.partial), size: len(m.partial), srv: m.ptag})
	m.partial, m.pdirty = m.partial[:0], true
}

// process adds the separator line of a process event.
func (m *Model) process(p *client.ProcInfo) {
	m.endPartial()
	pid := "pid " + strconv.Itoa(p.Pid)
	k, label := kSep, ""
	switch p.What {
	case client.ProcStart:
		m.exit = ""
		label = pid + " started: " + argv(p.Argv)
	case client.ProcSignal:
		label = "sonde sent " + p.Signal
	case client.ProcExit:
		label = pid + " exited"
		if x := p.Exit; x != nil {
			m.exit = x.Status()
			label += ": " + m.exit
			if x.Code != 0 || x.Signal != "" {
				k = kSepErr
			}
			if x.ByClose {
				label += " · stopped by sonde"
			}
		} else {
			m.exit = "exited"
		}
	case client.ProcConnect:
		m.exit = ""
		label = "connected to " + argv(p.Argv) + " over HTTP: a remote server's stderr is not visible"
	case client.ProcSpawnFailed:
		k, label, m.exit = kSepErr, "spawn failed", "spawn failed"
	default:
		label = pid + " " + string(p.What)
	}
	if p.Err != nil {
		label += ": " + p.Err.Error()
	}
	label = "── " + sanitize([]byte(label)) + " ──"
	m.push(line{kind: k, text: label, size: len(label), srv: m.tag})
	m.trim()
}

// argv renders a command line, quoting the arguments that need it.
func argv(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\"'\\") {
			out[i] = strconv.Quote(a)
		}
	}
	return strings.Join(out, " ")
}
