package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/sessions"
)

// ErrCapture is matched (errors.Is) by every error of the capture tools
// about their input: a capture that is missing or does not parse, an id
// that names no session. The tools answer it as a tool error (isError),
// its message saying what to do.
var ErrCapture = errors.New("capture")

// CaptureError is a capture the capture tools cannot read, or a name
// that is neither a file nor a session.
type CaptureError struct {
	// Arg is what the caller named (a path or a session id).
	Arg string
	// Msg says what is wrong and what to do.
	Msg string
}

// Error is the message, escaped: Arg came from the caller, Msg may quote
// a capture's bytes.
func (e *CaptureError) Error() string { return textfmt.Escape(e.Msg) }

// Is makes a *CaptureError match ErrCapture.
func (e *CaptureError) Is(target error) bool { return target == ErrCapture }

// captureRefs resolves what a capture tool is given (a capture's path, an
// id of one of this server's sessions, or a tapped session's id or the
// start of one) to a capture file.
type captureRefs struct {
	// own is the capture path of one of this server's sessions by its id
	// (ok false: no such session, or it records nothing); nil: none.
	own func(id string) (path string, ok bool)
	// dir is the sessions folder of sonde tap ("" : sessions.Dir()).
	dir string
}

// sessionsDir is the tap's sessions folder ("" when there is none).
func (r captureRefs) sessionsDir() string {
	if r.dir != "" {
		return r.dir
	}
	d, err := sessions.Dir()
	if err != nil {
		return ""
	}
	return d
}

// resolve is the capture file arg names: one of this server's sessions
// first, then an existing file, then a tapped session (its id, or the
// start of one that only one session begins with).
func (r captureRefs) resolve(arg string) (string, error) {
	if strings.TrimSpace(arg) == "" {
		return "", &CaptureError{Arg: arg, Msg: "no capture named: give a capture file's path, or a session id (sessions_list lists them)"}
	}
	if r.own != nil {
		if p, ok := r.own(arg); ok {
			return p, nil
		}
	}
	if _, err := os.Stat(arg); err == nil || strings.ContainsRune(arg, filepath.Separator) || strings.ContainsRune(arg, '/') {
		return arg, nil // a path: reading it says what is wrong with it
	}
	if dir := r.sessionsDir(); dir != "" {
		p, ok, err := sessions.Resolve(dir, arg)
		var amb *sessions.AmbiguousError
		switch {
		case errors.As(err, &amb):
			return "", &CaptureError{Arg: arg, Msg: amb.Error()}
		case err == nil && ok:
			return p, nil
		}
	}
	return "", &CaptureError{Arg: arg, Msg: fmt.Sprintf("%q is neither a capture file nor a session id: give a capture's path (sonde call --record FILE writes one), or an id sessions_list shows", arg)}
}

// readCapture reads the capture at path: begin (if not nil) gets its
// header, then fn each client event it holds with the line of its
// record. It returns the header and the reader's warnings (a cut last
// line, skipped record types). A file that cannot be read as a capture is
// a *CaptureError naming the file, the line and the reason.
func readCapture(path string, begin func(capture.Header), fn func(client.Event, int)) (capture.Header, []string, error) {
	h, warnings, err := capture.EachEvent(path, begin, fn)
	if err != nil {
		return h, nil, captureReadErr(path, err)
	}
	return h, warnings, nil
}

// captureReadErr is the error for a capture that cannot be read, as
// sonde lint words it, with what to do.
func captureReadErr(path string, err error) error {
	var fe *capture.FormatError
	var pe *fs.PathError
	msg := err.Error()
	hint := "give a capture file (sonde call --record FILE, sonde tap) or a session id from sessions_list"
	switch {
	case errors.As(err, &fe) && fe.Line > 0:
		msg = fmt.Sprintf("line %d: %v: %s", fe.Line, fe.Kind, fe.Reason)
		switch {
		case errors.Is(err, capture.ErrNewerVersion):
			hint = "a newer sonde wrote it: read it with that sonde"
		case errors.Is(err, capture.ErrBadRecord):
			hint = "the file is damaged at that line; a capture cut by a kill is read up to its last whole line"
		}
	case errors.As(err, &fe):
		msg = fmt.Sprintf("%v: %s", fe.Kind, fe.Reason)
	case errors.As(err, &pe):
		msg = pe.Err.Error()
	}
	return &CaptureError{Arg: path, Msg: "capture " + path + ": " + msg + " (" + hint + ")"}
}
