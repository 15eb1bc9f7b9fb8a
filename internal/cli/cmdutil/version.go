package cmdutil

import "runtime/debug"

// Version is stamped at build time: -ldflags "-X
// github.com/sonde-mcp/sonde/internal/cli/cmdutil.Version=v1.2.3" (make
// build, make release). Unstamped it is "dev".
var Version = "dev"

// VersionString is what `sonde --version` prints: the stamped version, or
// else what the Go toolchain recorded in the binary.
func VersionString() string {
	info, _ := debug.ReadBuildInfo()
	return resolveVersion(Version, info)
}

// resolveVersion is the stamped version when there is one. Otherwise it is
// the main module's version from info (go install ...@v1.2.3 records it), or
// "dev" followed by the VCS revision and "+dirty" for uncommitted changes
// (a build from a clone), or just "dev". info may be nil.
func resolveVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(len(s.Value), 12)]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev (" + rev + dirty + ")"
}
