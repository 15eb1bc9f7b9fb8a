package connect

import (
	"fmt"
	"os"
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
