package tap

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// ServeBreaks gives a session that is not a tap (sonde replay --serve
// --break) what sonde breaks needs of it: breakpoints built from the flags
// (exprs: --break, file: --breaks, timeout: --break-timeout, 0 holding
// until told), a recording named label in the sessions folder (what it
// records: the breakpoints and each step of a held frame; what is called
// says so in note), and that recording's socket, which answers the
// sonde/breaks/* methods. stop closes the socket, releases what is held
// and closes the recording. Without a sessions folder the breakpoints
// still hold, and stderr says sonde breaks cannot reach them. A bad flag
// is a usage error.
func ServeBreaks(env *cmdutil.Env, label, note string, exprs []string, file string, timeout time.Duration) (e *hold.Engine, stop func(), err error) {
	var noted atomic.Pointer[func(client.Hold)]
	e, err = engineOf(&BreakOptions{Breaks: exprs, BreaksFile: file, Timeout: timeout}, func(h client.Hold) {
		if n := noted.Load(); n != nil {
			(*n)(h)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	n, stop := ServeEngine(env, label, note, e)
	noted.Store(&n)
	return e, stop, nil
}

// ServeEngine gives a session that is not a tap and has its breakpoints
// (e, built by its command) a recording named label in the sessions folder
// and that recording's socket, which answers the sonde/breaks/* methods:
// sonde breaks reaches e there. Each step of a held frame given to noted
// is recorded (e's Note should call it). stop closes the socket, releases
// what is held and closes the recording. Without a sessions folder e still
// holds, and stderr says sonde breaks cannot reach it.
func ServeEngine(env *cmdutil.Env, label, note string, e *hold.Engine) (noted func(client.Hold), stop func()) {
	o, rec, path := startRecording(env, &Options{}, label, capture.Options{Transport: "stdio"},
		fmt.Sprintf("%s, pid %d: this recording holds its breakpoints and held frames (sonde breaks)", note, os.Getpid()))
	if o == nil {
		fmt.Fprintln(env.Err, "sonde: no recording in the sessions folder: sonde breaks cannot reach these breakpoints (they still hold, and auto-continue)")
		return func(client.Hold) {}, e.Close
	}
	noteBreaks(o, e)
	stopSocket := serveInjector(&control{obs: o, breaks: e}, socketPath(path), env.Err)
	return func(h client.Hold) { o.Hold(hold.Text(h), &h, time.Now()) }, func() {
		if stopSocket != nil {
			stopSocket()
		}
		e.Close()
		endObservation(env, o, rec, path, nil)
	}
}
