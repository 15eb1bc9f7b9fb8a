package tap_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// tinyDisk mounts a tmpfs of size bytes on a new folder for the rest of
// the test; it skips the test where mounting is not permitted (not root,
// or a container without CAP_SYS_ADMIN).
func tinyDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("cannot mount a tmpfs here: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestWrapFullDisk: on a disk too full for what wrap writes (a 64 KiB
// tmpfs), sonde wrap fails with a stable code and leaves the folder as it
// was: the config byte for byte, and no backup, whole or cut, and no
// temporary file. Two fillings: a config of 40 KiB, where the new file does
// not fit (before, the backup, written first, was left cut at 24 KiB), and
// one of 22 KiB, where the new file fits and its backup does not. After
// room is made, wrap works, and its backup is whole.
func TestWrapFullDisk(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		code string
	}{
		{"new file does not fit", 40 << 10, "CONFIG_WRITE"},
		{"backup does not fit", 22 << 10, "CONFIG_BACKUP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clitest.TempHostHome(t)
			dir := tinyDisk(t, "64k")
			file := filepath.Join(dir, "servers.json")
			head := "{\"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\""
			tail := "\"]}}}\n"
			orig := head + strings.Repeat("p", tc.size-len(head)-len(tail)) + tail
			if err := os.WriteFile(file, []byte(orig), 0o600); err != nil {
				t.Fatal(err)
			}
			before := listDir(t, dir)
			r := clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde)
			clitest.CheckRun(t, r, 2, "sonde: "+tc.code+": "+file+": ...")
			if !strings.Contains(r.Stderr, "no space left on device") || !strings.Contains(r.Stderr, "nothing was written") {
				t.Errorf("stderr %q: want the cause and that nothing was written", r.Stderr)
			}
			if after := listDir(t, dir); !reflect.DeepEqual(after, before) {
				for name, text := range after {
					t.Errorf("after the failed wrap: %s, %d bytes (before: %d)", name, len(text), len(before[name]))
				}
			}

			// Room made (a smaller file of the same entries): wrap works.
			small := head + "p" + tail
			if err := os.WriteFile(file, []byte(small), 0o600); err != nil {
				t.Fatal(err)
			}
			clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde), 0, "")
			if b, _ := os.ReadFile(file + ".sonde-backup"); string(b) != small {
				t.Errorf("backup of %d bytes, want %q", len(b), small)
			}
		})
	}
}
