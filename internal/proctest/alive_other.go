//go:build !unix && !windows

package proctest

import "os"

// Alive reports whether pid can still be found.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
