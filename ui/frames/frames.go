// Package frames is the Frames pane of sonde's TUI: the raw wire, both
// directions, in order.
//
// The pane keeps every client.EvFrame event in a bounded ring (Options.Capacity,
// default DefaultCapacity) and counts what it evicted. It shows one row per
// frame: time since the first frame (format.Dur), arrow, id, method (or kind,
// or verdict), size, the verdict coloured by state with its detail, and a
// preview of the raw bytes. Protocol violations carry a "!" in the gutter:
// those of the client's verdicts, and those package lint finds in the
// events applied (the same rules as sonde lint; the detail view names them).
//
// Modes: the list (follow mode on by default), the fuzzy filter being typed
// (Capturing is true), and the detail view of one frame (InDetail is true;
// there q, esc and backspace return to the list, so the root should hand q to
// the pane while InDetail reports true instead of quitting).
//
// The pane sends no messages to the root: everything it does is local.
package frames

import (
	"strconv"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"

	flt "github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// DefaultCapacity is the number of frames kept when Options.Capacity is 0.
const DefaultCapacity = 20000

// Options configures the pane.
type Options struct {
	// Capacity is the size of the frame ring; 0 means DefaultCapacity.
	Capacity int
}

type mode uint8

const (
	modeList mode = iota
	modeFilter
	modeDetail
)

// Model is the Frames pane. Use New; every method has a pointer receiver.
type Model struct {
	st     *theme.Styles
	keys   KeyMap
	breaks bool // b sets a breakpoint (SetBreaks)
	w, h   int
	now    time.Time
	// procs counts each server's processes started so far (restarts);
	// one server is "".
	procs map[string]int
	tag   string // the server whose events Apply folds (SetTag)

	ring  frameRing
	lint  *lint.Linter            // the protocol rules, run over every event applied
	lints map[string]*lint.Linter // with several servers: each server's
	// reqs is each server's request index ("" for one server), by which
	// the filter judges a frame (requests).
	reqs map[string]*flt.Requests
	t0   time.Time // time of the first frame since New or Reset

	follow bool
	sel    uint64 // absolute index of the selected frame
	top    uint64 // absolute index of the first visible row

	mode  mode
	flt   filter
	input textinput.Model
	det   detail
	pens  pens
	// note is what `y` or `w` did, shown until the next key.
	note    string
	saveDir string // where `w` saves (SetSaveDir)
}

// New returns an empty pane drawn with st.
func New(st *theme.Styles, o Options) *Model {
	if o.Capacity <= 0 {
		o.Capacity = DefaultCapacity
	}
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "id, method, kind, verdict, in/out"
	s := textinput.DefaultStyles(true)
	s.Focused.Prompt, s.Focused.Text, s.Focused.Placeholder = st.Accent, st.Text, st.Subtle
	s.Blurred = s.Focused
	s.Cursor.Color, s.Cursor.Blink = st.Palette.Accent, false
	in.SetStyles(s)
	m := &Model{st: st, keys: DefaultKeyMap(), follow: true, input: in, lint: lint.New(), lints: map[string]*lint.Linter{}, procs: map[string]int{}, reqs: map[string]*flt.Requests{}}
	m.ring = newFrameRing(o.Capacity)
	m.initPens()
	m.syncKeys()
	return m
}

// SetSize sets the inner size of the pane in cells.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = max(w, 0), max(h, 0)
	m.input.SetWidth(max(m.w-24, 8))
	if m.mode == modeDetail {
		m.buildDetail()
	}
	m.settle()
}

// SetNow records the root's clock. The pane shows times relative to the
// first frame, so it does not depend on the clock; it is kept for the
// contract.
func (m *Model) SetNow(t time.Time) { m.now = t }

// Nested reports whether a view below the list is open (the frame
// detail), where the root's q does nothing and esc goes back.
func (m *Model) Nested() bool { return m.mode == modeDetail }

// Reset forgets everything tied to the server process: all frames, the
// evicted count, the time origin, the filters and the open detail view (ids
// and event numbers start again with a new process, so an id filter would
// match the wrong frames). It keeps the size, the capacity and the keys, and
// turns follow mode back on.
func (m *Model) Reset() {
	m.ring = newFrameRing(m.ring.r.Cap())
	m.lint, m.lints = lint.New(), map[string]*lint.Linter{}
	m.t0, m.procs, m.reqs = time.Time{}, map[string]int{}, map[string]*flt.Requests{}
	m.flt = filter{}
	m.input.SetValue("")
	m.input.Blur()
	m.det = detail{}
	m.mode = modeList
	m.follow = true
	m.sel, m.top = 0, 0
	m.syncKeys()
}

// Capturing reports whether the filter input has the keyboard.
func (m *Model) Capturing() bool { return m.mode == modeFilter }

// InDetail reports whether the detail view of a frame is open. While it is,
// q (like esc and backspace) returns to the list.
func (m *Model) InDetail() bool { return m.mode == modeDetail }

// Following reports whether the view sticks to the newest frame.
func (m *Model) Following() bool { return m.follow }

// Len returns the number of frames held in the ring.
func (m *Model) Len() int { return m.ring.len() }

// Evicted returns the number of frames dropped from the full ring since New
// or Reset.
func (m *Model) Evicted() uint64 { return m.ring.oldest() }

// Keys returns the pane's key bindings, with those of other modes disabled.
func (m *Model) Keys() help.KeyMap {
	m.syncKeys()
	return m.keys
}

// Title is "Frames N", plus " · K evicted", " · follow" and " · filter: Q"
// when they apply.
func (m *Model) Title() string {
	s := "Frames " + commas(uint64(m.ring.len()))
	if ev := m.ring.oldest(); ev > 0 {
		s += " · " + commas(ev) + " evicted"
	}
	if m.follow {
		s += " · follow"
	}
	if m.flt.active() {
		s += " · filter: " + m.flt.label()
	}
	return s
}

// commas formats n with thousands separators: 1,234,567.
func commas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
