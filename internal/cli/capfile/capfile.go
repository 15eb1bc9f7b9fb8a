// Package capfile holds the commands that read a capture file: replay
// (--serve, --against, and the UI through the root), lint, stats and
// export.
package capfile

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// eachEvent reads the capture at path, calls begin (if not nil) with its
// header, then fn with each client event it holds, in order. It returns the header and the reader's warnings (a
// cut last line, skipped record types). A file that cannot be read as a
// capture (missing, not a capture, a newer format, a damaged record) is an
// exit status 2 error naming the file, the line and the reason.
func eachEvent(path string, begin func(capture.Header), fn func(client.Event)) (capture.Header, []string, error) {
	return eachEventAt(path, begin, func(ev client.Event, _ int) { fn(ev) })
}

// eachEventAt is eachEvent with the line of each event's record in the
// file.
func eachEventAt(path string, begin func(capture.Header), fn func(client.Event, int)) (capture.Header, []string, error) {
	h, warnings, err := capture.EachEvent(path, begin, fn)
	if err != nil {
		return h, nil, captureErr(path, err)
	}
	return h, warnings, nil
}

// captureErr is the error for a capture that cannot be read.
func captureErr(path string, err error) error {
	var fe *capture.FormatError
	var pe *fs.PathError
	msg := err.Error()
	switch {
	case errors.As(err, &fe) && fe.Line > 0:
		msg = fmt.Sprintf("line %d: %v: %s", fe.Line, fe.Kind, fe.Reason)
	case errors.As(err, &fe):
		msg = fmt.Sprintf("%v: %s", fe.Kind, fe.Reason)
	case errors.As(err, &pe):
		msg = pe.Err.Error()
	}
	return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "capture " + path + ": " + msg}
}

// warnCapture prints the reader's warnings on stderr.
func warnCapture(env *cmdutil.Env, path string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(env.Err, "sonde: capture %s: warning: %s\n", path, w)
	}
}
