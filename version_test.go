package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestStampedVersion builds sonde as `make build` and `make release` do,
// with the version stamped by the linker, and runs it: `sonde --version`
// and `sonde version` print exactly that version.
func TestStampedVersion(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build sonde: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "sonde")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command(goTool, "build", "-ldflags", "-X github.com/sonde-mcp/sonde/internal/cli/cmdutil.Version=v9.9.9-test", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil || string(out) != "sonde v9.9.9-test\n" {
			t.Errorf("sonde %s: %q, %v; want \"sonde v9.9.9-test\\n\"", args[0], out, err)
		}
	}
}
