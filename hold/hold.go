// Package hold owns breakpoints and the frames they hold (docs/breakpoints.md).
//
// A breakpoint is a query in sonde's filter language, judged as --filter
// judges a frame: a response by its request, so tool: and method: work on
// answers; dir:in is what comes from the server, dir:out what goes to it.
// Every frame of a session is Offered to the Engine in the order it came,
// whatever its transport (the stdio tap, the HTTP tap, sonde's own client,
// replay --serve): a frame no enabled breakpoint matches is not held and the
// transport forwards it exactly as today; a frame one matches is held, under
// a handle ("h3"), until someone releases, edits, drops or answers it, the
// auto-continue timeout passes, the last watcher goes away, or the session
// ends. Then the Engine calls the frame's Deliver once, with the Outcome,
// and the transport does it (frames it, writes it).
//
// The Engine does no I/O of its own: it holds bytes, timers and a small
// table of the requests in flight (to judge an answer by its request and
// to refuse an edit whose id collides). What it holds is bounded.
package hold

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
)

// Limits of one Engine.
const (
	// DefaultTimeout is how long a frame is held before it continues by
	// itself when Options.Timeout is not set: well below the hosts' own
	// request timeouts (60 s and more), so a host is never stranded.
	DefaultTimeout = 20 * time.Second
	// MaxBreakpoints is how many breakpoints an Engine keeps.
	MaxBreakpoints = 64
	// MaxExprBytes bounds one breakpoint's query.
	MaxExprBytes = 1024
	// MaxHeld is how many frames are held at once; past it a frame that
	// matches passes (and a note says so).
	MaxHeld = 256
	// MaxHeldBytes bounds the bytes of the frames held at once, the same way.
	MaxHeldBytes = 64 << 20
	// MaxEditBytes bounds an edited frame (or an answer).
	MaxEditBytes = 8 << 20
	// maxRequests bounds the table of requests in flight; past it the
	// oldest is forgotten (an answer to it is judged without its method).
	maxRequests = 4096
)

// Options configure an Engine.
type Options struct {
	// Timeout is how long a frame is held before it is released unchanged
	// (auto-continue). 0 means DefaultTimeout; Forever holds until told.
	Timeout time.Duration
	// Note gets each step of a held frame, in order, for the recording and
	// the UI; it is called outside the Engine's lock and must not block.
	Note func(client.Hold)
	// Changed is called, outside the lock, after anything List shows
	// changed (a breakpoint, a frame held or let go). It must not block.
	Changed func()
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Forever, as Options.Timeout, holds every frame until told.
const Forever time.Duration = -1

// Breakpoint is one breakpoint as listed.
type Breakpoint struct {
	// N numbers it from 1, for as long as the session runs (a deleted
	// breakpoint's number is not given again).
	N       int    `json:"n"`
	Expr    string `json:"expr"`
	Enabled bool   `json:"enabled"`
	// Hits counts the frames it held.
	Hits int `json:"hits"`
}

type breakpoint struct {
	Breakpoint
	f *filter.Filter
}

// Engine holds the breakpoints of one session and the frames they hold.
// Its methods are safe for concurrent use.
type Engine struct {
	opts Options

	mu       sync.Mutex
	bps      []*breakpoint
	nextBP   int
	held     map[string]*held
	order    []string // handles, in the order held
	nextH    int
	bytes    int
	reqs     requests
	watchers int
	closed   bool
}

// New returns an Engine with no breakpoint.
func New(opts Options) *Engine {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Note == nil {
		opts.Note = func(client.Hold) {}
	}
	if opts.Changed == nil {
		opts.Changed = func() {}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Engine{opts: opts, held: map[string]*held{}, reqs: newRequests()}
}

// Timeout is the auto-continue timeout (Forever: none).
func (e *Engine) Timeout() time.Duration { return e.opts.Timeout }

// Add parses expr and adds it as an enabled breakpoint.
func (e *Engine) Add(expr string) (Breakpoint, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return Breakpoint{}, &Error{Code: CodeBadBreak, Msg: "a breakpoint needs a query (docs/filter.md), such as 'dir:in tool:search'; an empty one would hold every frame"}
	case len(expr) > MaxExprBytes:
		return Breakpoint{}, &Error{Code: CodeBadBreak, Msg: fmt.Sprintf("a breakpoint's query is %d bytes, over the %d allowed", len(expr), MaxExprBytes)}
	}
	f, err := filter.Parse(expr)
	if err != nil {
		return Breakpoint{}, &Error{Code: CodeBadBreak, Msg: fmt.Sprintf("breakpoint %q: %v", expr, err), Err: err}
	}
	e.mu.Lock()
	if len(e.bps) >= MaxBreakpoints {
		e.mu.Unlock()
		return Breakpoint{}, &Error{Code: CodeBadBreak, Msg: fmt.Sprintf("a session keeps at most %d breakpoints: delete one first", MaxBreakpoints)}
	}
	e.nextBP++
	b := &breakpoint{Breakpoint: Breakpoint{N: e.nextBP, Expr: expr, Enabled: true}, f: f}
	e.bps = append(e.bps, b)
	e.mu.Unlock()
	e.opts.Changed()
	return b.Breakpoint, nil
}

// Remove deletes breakpoint n. Frames it holds stay held.
func (e *Engine) Remove(n int) error {
	e.mu.Lock()
	i := e.find(n)
	if i < 0 {
		e.mu.Unlock()
		return noBreak(n)
	}
	e.bps = append(e.bps[:i], e.bps[i+1:]...)
	e.mu.Unlock()
	e.opts.Changed()
	return nil
}

// SetEnabled turns breakpoint n on or off. Frames it holds stay held.
func (e *Engine) SetEnabled(n int, on bool) error {
	e.mu.Lock()
	i := e.find(n)
	if i < 0 {
		e.mu.Unlock()
		return noBreak(n)
	}
	e.bps[i].Enabled = on
	e.mu.Unlock()
	e.opts.Changed()
	return nil
}

func noBreak(n int) error {
	return &Error{Code: CodeBadBreak, Msg: fmt.Sprintf("no breakpoint %d (sonde breaks lists them)", n)}
}

func (e *Engine) find(n int) int {
	for i, b := range e.bps {
		if b.N == n {
			return i
		}
	}
	return -1
}

// Breakpoints lists the breakpoints, in the order added.
func (e *Engine) Breakpoints() []Breakpoint {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Breakpoint, len(e.bps))
	for i, b := range e.bps {
		out[i] = b.Breakpoint
	}
	return out
}

// Armed reports whether any breakpoint is enabled (a transport may pass
// frames without offering them while none is; Offer then holds nothing).
func (e *Engine) Armed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range e.bps {
		if b.Enabled {
			return true
		}
	}
	return false
}

// Load adds the breakpoints of --break (exprs) and --breaks (file: one
// query a line; blank lines and lines starting with # are skipped). A
// mistake names its flag or file and line.
func (e *Engine) Load(exprs []string, file string, r io.Reader) error {
	for _, x := range exprs {
		if _, err := e.Add(x); err != nil {
			return fmt.Errorf("--break: %w", err)
		}
	}
	if r == nil {
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxExprBytes+2)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := e.Add(line); err != nil {
			return fmt.Errorf("%s:%d: %w", file, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s: a line is over %d bytes: %w", file, MaxExprBytes, &Error{Code: CodeBadBreak, Msg: "breakpoint query too long"})
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// match returns the first enabled breakpoint that matches it (nil: none).
func (e *Engine) match(it *filter.Item) *breakpoint {
	for _, b := range e.bps {
		if b.Enabled && b.f.Match(it) {
			return b
		}
	}
	return nil
}

// Error is a refusal of the Engine, with the JSON-RPC code the control
// socket answers it with (docs/breakpoints.md, "Errors").
type Error struct {
	Code int64
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause (a filter.SyntaxError, a json.SyntaxError).
func (e *Error) Unwrap() error { return e.Err }

// Is makes an *Error match the sentinel of its code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Msg == "" && t.Code == e.Code
}

// The codes of the Engine's refusals (-32091…-32095; -32090 is the tap's
// "no injection here").
const (
	CodeNoHandle    = -32091 // no frame is held under that handle (any more)
	CodeBadEdit     = -32092 // an edit or answer refused: the frame stays held
	CodeNotRequest  = -32093 // answer asked of a frame that is not a request
	CodeBadBreak    = -32094 // a breakpoint's query is wrong, or no such breakpoint
	CodeUndelivered = -32095 // the decision was taken but its frame could not be sent (a closed stream)
)

// Sentinels for errors.Is.
var (
	ErrNoHandle    = &Error{Code: CodeNoHandle}
	ErrBadEdit     = &Error{Code: CodeBadEdit}
	ErrNotRequest  = &Error{Code: CodeNotRequest}
	ErrBadBreak    = &Error{Code: CodeBadBreak}
	ErrUndelivered = &Error{Code: CodeUndelivered}
)
