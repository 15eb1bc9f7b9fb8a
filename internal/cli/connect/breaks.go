package connect

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// BreakFlags are the breakpoint flags of a session sonde drives itself
// (docs/breakpoints.md, "sonde's own session"): --break Q (repeatable),
// --breaks FILE, --break-timeout D.
type BreakFlags struct {
	Breaks  []string
	File    string
	Timeout time.Duration
}

// Register adds the flags to fs.
func (b *BreakFlags) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&b.Breaks, "break", nil, "hold the frames that match the filter query `Q` (docs/filter.md), as 'dir:in tool:search' (repeatable; docs/breakpoints.md)")
	fs.StringVar(&b.File, "breaks", "", "read breakpoints from `FILE`, one query a line (# comments)")
	fs.DurationVar(&b.Timeout, "break-timeout", hold.DefaultTimeout, "a held frame goes on unchanged after this long (0: held until told)")
}

// Given reports whether --break or --breaks was given.
func (b *BreakFlags) Given() bool { return len(b.Breaks) > 0 || b.File != "" }

// Engine returns the Engine the flags describe, with changed (if not nil)
// called after each change of what it holds. A bad query or file is a
// usage error naming its flag or line.
func (b *BreakFlags) Engine(changed func(), note func(client.Hold)) (*hold.Engine, error) {
	timeout := b.Timeout
	switch {
	case timeout < 0:
		return nil, cmdutil.Usagef("--break-timeout must not be negative (0 holds until told)")
	case timeout == 0:
		timeout = hold.Forever
	}
	e := hold.New(hold.Options{Timeout: timeout, Changed: changed, Note: note})
	var err error
	if b.File != "" {
		f, ferr := os.Open(b.File)
		if ferr != nil {
			return nil, cmdutil.Usagef("--breaks: " + ferr.Error())
		}
		err = e.Load(b.Breaks, b.File, f)
		f.Close()
	} else {
		err = e.Load(b.Breaks, "", nil)
	}
	if err != nil {
		e.Close()
		return nil, cmdutil.Usagef(fmt.Sprint(err))
	}
	return e, nil
}

// BreakServer gives the breakpoints of a session with no UI a place in
// the sessions folder and its socket, where sonde breaks reaches them
// (internal/cli/tap.ServeEngine, passed in by the command tree): noted
// records a held frame's step there; stop closes the socket, releases what
// is held and ends that recording.
type BreakServer func(env *cmdutil.Env, label, note string, e *hold.Engine) (noted func(client.Hold), stop func())

// Held are the breakpoints of a session with no UI (sonde call, sonde
// script): its frames are offered to them (hold.Dialer); while anything is
// held the client's deadlines stand still (HoldForFrames: held time is not
// the server's); each step of a held frame is noted on the client (so
// --record keeps it) and in the sessions folder's recording.
type Held struct {
	engine  *hold.Engine
	current atomic.Pointer[client.Client]
	stop    func()
}

// Headless returns the breakpoints the flags describe for a session with no
// UI, named label in the sessions folder (nil when no --break or --breaks is
// given). With no watcher, a held frame goes on unchanged after
// --break-timeout, unless sonde breaks (release, edit, drop, answer)
// acts on it first; with --break-timeout 0 it waits for sonde breaks. The
// caller must Close it after the session.
func (b *BreakFlags) Headless(env *cmdutil.Env, serve BreakServer, label string) (*Held, error) {
	if !b.Given() {
		return nil, nil
	}
	h := &Held{}
	var noted atomic.Pointer[func(client.Hold)]
	eng, err := b.Engine(func() {
		if c := h.current.Load(); c != nil { // (none while the flags load)
			c.HoldForFrames(len(h.engine.List()) > 0)
		}
	}, func(x client.Hold) {
		if c := h.current.Load(); c != nil {
			c.NoteHold(hold.Text(x), x)
		}
		if n := noted.Load(); n != nil {
			(*n)(x)
		}
	})
	if err != nil {
		return nil, err
	}
	h.engine = eng
	n, stop := serve(env, label, "sonde "+label, eng)
	noted.Store(&n)
	h.stop = stop
	return h, nil
}

// Close releases what is held (unchanged), closes the socket and ends the
// sessions folder's recording. A nil Held does nothing.
func (h *Held) Close() {
	if h != nil {
		h.stop()
	}
}

// dial returns dial with its frames offered to the breakpoints (dial as it
// is when h is nil).
func (h *Held) dial(dial client.Dialer) client.Dialer {
	if h == nil {
		return dial
	}
	return hold.Dialer(dial, h.engine)
}

// follow makes c the client the breakpoints tell.
func (h *Held) follow(c *client.Client) {
	if h != nil {
		h.current.Store(c)
	}
}
