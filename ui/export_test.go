package ui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/report"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func withExport(e Exporter, capturePath string) opt {
	return func(o *Options) { o.Export, o.Capture = e, capturePath }
}

// TestExportKey: in a live session X is refused, with the reason, until
// something is recorded; after R it writes the recording's page beside
// it (the real report writer) and the status bar names the page.
func TestExportKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "captures")
	sw := capture.NewSwitch(capture.Options{Command: []string{"srv"}}, dir)
	hs := newHarness(t, 200, 30, withRecorder(sw), withExport(report.Beside("test"), ""))
	hs.connect()
	if cmd := hs.press("X"); cmd != nil {
		t.Fatal("X exported before anything was recorded")
	}
	if st := hs.status(); !strings.Contains(st, "X: nothing recorded to export") {
		t.Fatalf("status after a refused X: %q", st)
	}
	hs.runCmd(hs.press("R")) // recording on
	hs.runCmd(hs.press("X")) // the recording under way, as far as it goes
	names, _ := os.ReadDir(dir)
	var page string
	for _, n := range names {
		if strings.HasSuffix(n.Name(), ".html") {
			page = filepath.Join(dir, n.Name())
		}
	}
	if page == "" {
		t.Fatalf("no page beside the recording: %v", names)
	}
	if st := hs.status(); !strings.Contains(st, "exported "+page) {
		t.Fatalf("status %q does not name %s", st, page)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Fatalf("page %s: %v %.40q", page, err, b)
	}
}

// TestExportKeyError: an export that fails says why, in the status bar;
// the fleet refuses X with its reason.
func TestExportKeyError(t *testing.T) {
	fail := func(string) (string, error) { return "", errors.New("disk full") }
	hs := newHarness(t, 200, 30, withExport(fail, ""))
	hs.connect()
	hs.m.rec.Path = "/some/rec.jsonl" // as after R
	syncKeys(&hs.m.keys, hs.m.mode)
	hs.runCmd(hs.press("X"))
	if st := hs.status(); !strings.Contains(st, "export: disk full") {
		t.Fatalf("status after a failed export: %q", st)
	}
	if ok, why := (&fleet{}).Can(actExport); ok || !strings.Contains(why, "one server's recording") {
		t.Fatalf("fleet Can(actExport) = %v %q", ok, why)
	}
}

// TestExportKeyReplay: X in a replay writes the page of the file replayed
// beside it.
func TestExportKeyReplay(t *testing.T) {
	src, err := os.ReadFile("../testdata/captures/concurrent-calls.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	m := New(Options{Replay: tl, Palette: theme.NoColor(), NoColor: true, Command: path,
		Now: func() time.Time { return replayClock }, Export: report.Beside("test"), Capture: path})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
	_, cmd := m.Update(tea.KeyPressMsg{Code: 'X', Text: "X"})
	if cmd == nil {
		t.Fatal("X did nothing in a replay")
	}
	m.Update(cmd())
	want := strings.TrimSuffix(path, ".jsonl") + ".html"
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("no page at %s: %v", want, err)
	}
	if st := ansi.Strip(m.statusBar()); !strings.Contains(st, "exported "+want) {
		t.Fatalf("status %q", st)
	}
}
