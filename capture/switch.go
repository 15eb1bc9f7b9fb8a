package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// Switch turns recording on and off during an interactive session: each
// recording is a new capture file that follows the current client and, while
// on, the clients of later restarts. It is safe for concurrent use; its
// methods do file I/O.
type Switch struct {
	mu   sync.Mutex
	opts Options
	dir  string
	now  func() time.Time

	rec  *Recorder
	path string
	note string
}

// NewSwitch returns a switch whose recordings use opts (header, redaction)
// and, when started by Toggle, go to dir (created with mode 0700 when
// missing) under a name made of the time (FileName).
func NewSwitch(opts Options, dir string) *Switch {
	return &Switch{opts: opts, dir: dir, now: time.Now}
}

// Start starts recording to path (which must not exist), following c when
// it is not nil.
func (s *Switch) Start(path string, c *client.Client) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		return fmt.Errorf("already recording to %s", s.path)
	}
	f, err := Create(path, false)
	if err != nil {
		return err
	}
	opts := s.opts
	opts.Start = time.Time{}
	rec, err := NewRecorder(f, opts)
	if err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	s.rec, s.path, s.note = rec, path, ""
	if c != nil {
		rec.Follow(c)
	}
	return nil
}

// Follow records c too, when recording is on (call it before c.Connect).
func (s *Switch) Follow(c *client.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.Follow(c)
	}
}

// Stop ends the recording under way (the client goes on) and returns its
// summary; ok is false when nothing was being recorded.
func (s *Switch) Stop() (path string, sum Summary, ok bool) {
	s.mu.Lock()
	rec, path := s.rec, s.path
	s.rec = nil
	s.mu.Unlock()
	if rec == nil {
		return "", Summary{}, false
	}
	sum = rec.Close()
	s.mu.Lock()
	s.note = shortNote(path, sum)
	s.mu.Unlock()
	return path, sum, true
}

// Toggle starts recording c's session to a new file in the switch's
// folder, or stops the recording under way. It reports the new state as
// State does.
func (s *Switch) Toggle(c *client.Client) (on bool, path, note string, err error) {
	s.mu.Lock()
	recording := s.rec != nil
	s.mu.Unlock()
	if recording {
		s.Stop()
		on, path, note = s.State()
		return on, path, note, nil
	}
	if s.dir == "" {
		return false, "", "", fmt.Errorf("no folder for captures (set XDG_DATA_HOME or HOME)")
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return false, "", "", fmt.Errorf("capture folder: %w", err)
	}
	if err := s.Start(filepath.Join(s.dir, FileName(s.now())), c); err != nil {
		return false, "", "", err
	}
	on, path, note = s.State()
	return on, path, note, nil
}

// State reports whether recording is on, the file of the current (or last)
// recording, and the summary of the last one stopped.
func (s *Switch) State() (on bool, path, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec != nil, s.path, s.note
}

// shortNote is a short summary of a recording, for a status bar.
func shortNote(path string, sum Summary) string {
	switch {
	case sum.Err != nil:
		return fmt.Sprintf("capture %s incomplete: %v", path, sum.Err)
	case sum.Missed > 0:
		return fmt.Sprintf("saved %s (%d events, %d missed)", path, sum.Events, sum.Missed)
	}
	return fmt.Sprintf("saved %s (%d events)", path, sum.Events)
}

// SummaryLine says in one line where a capture went and what it lacks.
func SummaryLine(path string, sum Summary) string {
	switch {
	case sum.Err != nil:
		return fmt.Sprintf("capture %s is incomplete: %v", path, sum.Err)
	case sum.Missed > 0:
		return fmt.Sprintf("capture %s: %d events recorded, %d missed (the disk could not keep up; see the \"missed\" records)", path, sum.Events, sum.Missed)
	}
	return fmt.Sprintf("capture %s: %d events recorded", path, sum.Events)
}
