package capture

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestSwitch: recording is off until started; Toggle starts a file named by
// the time in the folder and stops it; Start refuses an existing file; a
// client followed while off is not recorded.
func TestSwitch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "captures")
	sw := NewSwitch(Options{Command: []string{"srv"}}, dir)
	if on, _, _ := sw.State(); on {
		t.Fatal("on before any start")
	}
	if _, _, ok := sw.Stop(); ok {
		t.Fatal("Stop with nothing recording reported a recording")
	}
	l := startLive(t, liveOpts{})
	sw.Follow(l.c) // off: nothing happens
	on, path, _, err := sw.Toggle(l.c)
	if err != nil || !on || filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "sonde-") {
		t.Fatalf("Toggle: %v %q %v", on, path, err)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("capture folder %v %v", st, err)
	}
	if err := sw.Start(filepath.Join(dir, "other.jsonl"), nil); err == nil {
		t.Error("a second Start while recording succeeded")
	}
	if _, err := l.c.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	on, path2, note, err := sw.Toggle(l.c)
	if err != nil || on || path2 != path || !strings.HasPrefix(note, "saved "+path+" (") {
		t.Fatalf("second Toggle: %v %q %q %v", on, path2, note, err)
	}
	_, recs := readAll(t, path)
	var session bool
	for _, r := range recs {
		session = session || r.Type == TypeSession
	}
	if !session {
		t.Error("the recording missed the handshake")
	}
	if err := sw.Start(path, nil); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Start over an existing capture: %v", err)
	}
	var c *client.Client
	if _, _, _, err := NewSwitch(Options{}, "").Toggle(c); err == nil || !strings.Contains(err.Error(), "no folder") {
		t.Errorf("Toggle without a folder: %v", err)
	}
}
