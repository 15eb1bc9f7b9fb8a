//go:build windows

package proctest

import "github.com/sonde-mcp/sonde/sessions"

// Alive reports whether pid is a live process. On Windows that is what
// sessions.Live asks (the process can be opened, or is not ours to open,
// and has no exit code yet), with no check of its command line, so it is
// the one probe of both.
func Alive(pid int) bool { return sessions.Live(pid) }
