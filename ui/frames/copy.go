package frames

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// ErrSave is matched (errors.Is) by every failure of `w` to save a frame.
var ErrSave = errors.New("frames: cannot save the frame")

// savedMsg reports `w`: the frame was written to path, or err. It carries
// the pane's own pointer, so another Frames pane ignores it.
type savedMsg struct {
	owner *Model
	path  string
	err   error
}

// current is the frame `y` and `w` act on: the one open in the detail
// view, else the selected row; nil when there is none.
func (m *Model) current() *entry {
	if m.mode == modeDetail && m.det.e.f != nil {
		return &m.det.e
	}
	if m.count() == 0 {
		return nil
	}
	e := m.ring.at(m.absAt(m.indexOf(m.sel)))
	if e == nil || e.f == nil {
		return nil
	}
	return e
}

// copyCmd is `y`: the frame's exact bytes to the clipboard (OSC 52).
func (m *Model) copyCmd() tea.Cmd {
	e := m.current()
	if e == nil {
		return nil
	}
	m.note = "copied frame " + strconv.FormatUint(e.seq, 10) + " (" + textfmt.Size(len(e.f.Raw)) + ") to the clipboard"
	return tea.SetClipboard(string(e.f.Raw))
}

// saveCmd is `w`: the frame, pretty-printed when it is JSON, to a new
// file sonde-frame-SEQ.json in the save directory (SetSaveDir; the
// working directory by default). The file is written by the command, not
// in Update.
func (m *Model) saveCmd() tea.Cmd {
	e := m.current()
	if e == nil {
		return nil
	}
	raw, seq, dir := bytes.Clone(e.f.Raw), e.seq, m.saveDir
	m.note = "saving frame " + strconv.FormatUint(seq, 10) + "…"
	return func() tea.Msg {
		path, err := saveFrame(dir, seq, raw)
		return savedMsg{owner: m, path: path, err: err}
	}
}

// SetSaveDir sets the directory `w` saves frames to ("" is the working
// directory).
func (m *Model) SetSaveDir(dir string) { m.saveDir = dir }

// saveFrame writes raw (indented when it is JSON) to a file of dir that
// did not exist, sonde-frame-SEQ.json or sonde-frame-SEQ-N.json.
func saveFrame(dir string, seq uint64, raw []byte) (string, error) {
	data := raw
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") == nil {
		data = b.Bytes()
	}
	data = append(bytes.Clone(data), '\n')
	base := "sonde-frame-" + strconv.FormatUint(seq, 10)
	for n := 1; n <= 100; n++ {
		name := base + ".json"
		if n > 1 {
			name = base + "-" + strconv.Itoa(n) + ".json"
		}
		path := filepath.Join(dir, name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrSave, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("%w: %s: %w", ErrSave, path, werr)
		}
		return path, nil
	}
	return "", fmt.Errorf("%w: %s-2 … -100.json all exist in %q", ErrSave, base, dir)
}

// saved shows the outcome of `w`.
func (m *Model) saved(msg savedMsg) {
	if msg.err != nil {
		m.note = msg.err.Error()
		return
	}
	m.note = "saved to " + msg.path
}
