package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

func withRecorder(r Recorder) opt { return func(o *Options) { o.Recorder = r } }

// runCmd runs cmd and delivers its message, as the program would.
func (hs *harness) runCmd(cmd tea.Cmd) {
	hs.t.Helper()
	if cmd == nil {
		hs.t.Fatal("no command")
	}
	hs.send(cmd())
}

// TestRecordKey: R starts recording to a new file in the capture folder
// (the status bar says so, with the file name), R again stops it (the status
// bar gives the summary) and the file is a readable capture.
func TestRecordKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "captures")
	sw := capture.NewSwitch(capture.Options{Command: []string{"srv"}}, dir)
	hs := newHarness(t, 140, 30, withRecorder(sw))
	hs.connect()
	if strings.Contains(hs.status(), "REC") {
		t.Fatalf("recording before R: %q", hs.status())
	}
	hs.runCmd(hs.press("R"))
	names, err := os.ReadDir(dir)
	if err != nil || len(names) != 1 || !strings.HasPrefix(names[0].Name(), "sonde-") {
		t.Fatalf("capture folder after R: %v %v", names, err)
	}
	want := "● REC " + names[0].Name()
	if !strings.Contains(hs.status(), want) {
		t.Fatalf("status %q, want %q", hs.status(), want)
	}
	// At every width the file's name stays.
	for w := 50; w <= 140; w += 5 {
		hs.send(tea.WindowSizeMsg{Width: w, Height: 30})
		if !strings.Contains(hs.status(), want) {
			t.Errorf("%d columns: status %q lost the recording's name", w, hs.status())
		}
	}
	hs.send(tea.WindowSizeMsg{Width: 200, Height: 30})
	hs.runCmd(hs.press("R"))
	full := filepath.Join(dir, names[0].Name())
	fi, err := os.Stat(full)
	if err != nil {
		t.Fatal(err)
	}
	if st := hs.status(); strings.Contains(st, "REC") || !strings.Contains(st, "saved "+full+" (") || !strings.Contains(st, " · "+textfmt.Size(int(fi.Size()))) {
		t.Fatalf("status after stopping: %q, want the path %s and the size %d", st, full, fi.Size())
	}
	h, recs := capturetest.Records(t, filepath.Join(dir, names[0].Name()))
	var end bool
	for _, rec := range recs {
		end = end || rec.Type == capture.TypeEnd
	}
	if !end || h.Command[0] != "srv" {
		t.Errorf("capture: end record %v, header %+v", end, h)
	}
}

// TestRecordKeyErrorAndAbsence: a folder that cannot be created is
// reported in the status bar; without a recorder R does nothing.
func TestRecordKeyErrorAndAbsence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	hs := newHarness(t, 200, 30, withRecorder(capture.NewSwitch(capture.Options{}, filepath.Join(file, "sub"))))
	hs.connect()
	hs.runCmd(hs.press("R"))
	if st := hs.status(); !strings.Contains(st, "recording: capture folder") {
		t.Errorf("status %q, want the error", st)
	}
	plain := newHarness(t, 120, 30)
	plain.connect()
	if cmd := plain.press("R"); cmd != nil {
		t.Errorf("R without a recorder returned a command")
	}
}
