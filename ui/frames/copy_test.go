package frames

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestCopySelected: y puts the selected frame's exact bytes on the
// clipboard (the OSC 52 command) and says so in the pane's bar.
func TestCopySelected(t *testing.T) {
	m := newModel(t, 118, 20)
	press(m, "g")
	press(m, "j")
	raw := string(m.current().f.Raw)
	cmd := press(m, "y")
	if cmd == nil {
		t.Fatal("y returned no command")
	}
	if got := fmt.Sprint(cmd()); got != raw {
		t.Errorf("clipboard %q, want the frame %q", got, raw)
	}
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "copied frame 2 (139B) to the clipboard") {
		t.Errorf("no note of the copy:\n%s", v)
	}
	press(m, "j")
	if v := ansi.Strip(m.View()); strings.Contains(v, "copied frame") {
		t.Errorf("the note outlived the next key:\n%s", v)
	}
}

// TestCopyOpenFrame: in the detail view, y copies the open frame.
func TestCopyOpenFrame(t *testing.T) {
	m := newModel(t, 118, 20)
	press(m, "g")
	press(m, "enter")
	raw := string(m.det.e.f.Raw)
	if got := fmt.Sprint(press(m, "y")()); got != raw {
		t.Errorf("clipboard %q, want %q", got, raw)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "esc back · copied frame") {
		t.Errorf("no note in the footer:\n%s", v)
	}
}

// TestSaveSelected: w writes the frame, indented, to a new file (a
// second w to another), and the pane says where; a directory that cannot
// be written gives ErrSave, shown in the bar.
func TestSaveSelected(t *testing.T) {
	dir := t.TempDir()
	m := newModel(t, 118, 20)
	m.SetSaveDir(dir)
	press(m, "g")
	cmd := press(m, "w")
	if cmd == nil {
		t.Fatal("w returned no command")
	}
	if _, err := os.Stat(filepath.Join(dir, "sonde-frame-1.json")); err == nil {
		t.Fatal("the file was written in Update, not by the command")
	}
	m.Update(cmd())
	want := filepath.Join(dir, "sonde-frame-1.json")
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"jsonrpc\": \"2.0\",") {
		t.Errorf("saved %q, want indented JSON", b)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "saved to "+want) {
		t.Errorf("no note of the save:\n%s", v)
	}
	m.Update(press(m, "w")())
	if _, err := os.Stat(filepath.Join(dir, "sonde-frame-1-2.json")); err != nil {
		t.Errorf("the second save: %v", err)
	}

	m.SetSaveDir(filepath.Join(dir, "missing"))
	msg := press(m, "w")()
	if s, ok := msg.(savedMsg); !ok || !errors.Is(s.err, ErrSave) {
		t.Fatalf("save into a missing directory: %#v", msg)
	}
	m.Update(msg)
	if v := ansi.Strip(m.View()); !strings.Contains(v, "cannot save the frame") {
		t.Errorf("no error in the bar:\n%s", v)
	}
}
