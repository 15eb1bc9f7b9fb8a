package cmdutil

import (
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
