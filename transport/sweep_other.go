//go:build !linux

package transport

import "os"

// sweep finds nothing outside Linux: there the process group (Unix) or the
// job object (Windows) is all sonde stops. On macOS and the BSDs a process
// that left the server's group (setsid) keeps running (README, docs/commands.md).
func sweep(mark string, pipes []*os.File) []ProcStat { return nil }
