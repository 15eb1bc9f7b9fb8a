//go:build !linux

package tap

// hostName is the name of the running process pid: not read outside Linux
// (the list shows the host's pid alone).
func hostName(pid int) string { return "" }
