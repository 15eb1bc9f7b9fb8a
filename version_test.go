package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	vcs := func(kv ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/sonde-mcp/sonde", Version: "(devel)"}}
		for i := 0; i < len(kv); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return info
	}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/sonde-mcp/sonde", Version: "v1.4.0"}}
	tests := []struct {
		name, stamped string
		info          *debug.BuildInfo
		want          string
	}{
		{"stamped wins", "v2.0.0", installed, "v2.0.0"},
		{"stamped, no build info", "v2.0.0-rc.1", nil, "v2.0.0-rc.1"},
		{"go install @version", "dev", installed, "v1.4.0"},
		{"clone", "dev", vcs("vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.modified", "false"), "dev (0123456789ab)"},
		{"clone with changes", "dev", vcs("vcs.modified", "true", "vcs.revision", "0123456789abcdef0123"), "dev (0123456789ab+dirty)"},
		{"short revision", "dev", vcs("vcs.revision", "abc"), "dev (abc)"},
		{"no VCS information", "dev", vcs("-buildvcs", "false"), "dev"},
		{"nothing", "", nil, "dev"},
	}
	for _, tc := range tests {
		if got := resolveVersion(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

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
	build := exec.Command(goTool, "build", "-ldflags", "-X main.version=v9.9.9-test", "-o", bin, ".")
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
