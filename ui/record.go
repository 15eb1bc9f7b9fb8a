package ui

import (
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Recorder starts and stops recording the session to a capture file (the
// R key). Its methods do I/O: the UI calls them from commands only, except
// State, once, in New. capture.Switch implements it.
type Recorder interface {
	// Toggle starts recording the session of c to a new capture file, or
	// stops the recording under way, and returns the new state.
	Toggle(c *client.Client) (on bool, path, note string, err error)
	// State says whether recording is on, the file of the current (or last)
	// recording, and a one-line summary of the last one stopped.
	State() (on bool, path, note string)
}

// RecordState is what the status bar shows about recording.
type RecordState struct {
	On   bool
	Path string
	Note string
	// Size is the size of the file when a recording stopped (-1: unknown).
	Size int64
}

// recordMsg is the result of a toggle.
type recordMsg struct {
	state RecordState
	err   error
}

// toggleRecord runs r's toggle for the session of c in a command (none
// without a recorder).
func toggleRecord(r Recorder, c *client.Client) tea.Cmd {
	if r == nil {
		return nil
	}
	return func() tea.Msg {
		on, path, note, err := r.Toggle(c)
		st := RecordState{On: on, Path: path, Note: note, Size: -1}
		if !on && path != "" {
			if fi, err := os.Stat(path); err == nil {
				st.Size = fi.Size()
			}
		}
		return recordMsg{state: st, err: err}
	}
}

// apply takes the outcome of a toggle.
func (r *RecordState) apply(msg recordMsg) {
	if msg.err != nil {
		r.Note = "recording: " + msg.err.Error()
		return
	}
	*r = msg.state
}

// part is the status bar's text about recording ("" when there is
// nothing to say): the file's name while recording; once stopped, the
// saved file's path and size (the note of the recorder, which names it).
func (r RecordState) part() (text string, on bool) {
	switch {
	case r.On:
		return "● REC " + filepath.Base(r.Path), true
	case r.Note != "":
		if r.Size >= 0 {
			return r.Note + " · " + textfmt.Size(int(r.Size)), false
		}
		return r.Note, false
	}
	return "", false
}
