package capfile

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/replay/serve"
	"github.com/spf13/pflag"
)

// BreakServer gives `sonde replay --serve --break` its breakpoints and
// what sonde breaks reaches them through: a recording named label in the
// sessions folder and its socket (internal/cli/tap.ServeBreaks, passed in
// by the root command: another family's). stop closes them and releases
// what is held.
type BreakServer func(env *cmdutil.Env, label, note string, exprs []string, file string, timeout time.Duration) (e *hold.Engine, stop func(), err error)

func (o *ReplayOptions) registerBreaks(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Breaks, "break", nil, "with --serve: hold the messages that match `QUERY` (the filter language; dir:out is the client's, dir:in the mock's; repeatable) until sonde breaks lets them go")
	fs.StringVar(&o.BreaksFile, "breaks", "", "with --serve: read breakpoints from `FILE`, one query a line ('#' starts a comment)")
	fs.DurationVar(&o.BreakTimeout, "break-timeout", hold.DefaultTimeout, "with --serve --break: release a held message unchanged after this long (0: hold until told)")
}

// serveBreaks sets so.Hold from --break/--breaks, with a session in the
// sessions folder that sonde breaks reaches (named after the capture:
// replay-NAME). Without those flags it does nothing.
func (o *ReplayOptions) serveBreaks(env *cmdutil.Env, so *serve.Options) (stop func(), err error) {
	if len(o.Breaks) == 0 && o.BreaksFile == "" {
		return func() {}, nil
	}
	if o.breakServer == nil {
		return nil, cmdutil.Usagef("--break: this sonde has no breakpoints for --serve")
	}
	name := strings.TrimSuffix(filepath.Base(o.Serve), filepath.Ext(o.Serve))
	how := "stdio"
	if o.Listen != "" {
		how = "http://" + o.Listen
	}
	e, stop, err := o.breakServer(env, "replay-"+name, fmt.Sprintf("sonde replay --serve %s (%s)", o.Serve, how), o.Breaks, o.BreaksFile, o.BreakTimeout)
	if err != nil {
		return nil, err
	}
	so.Hold = e
	return stop, nil
}
