//go:build windows

package sessions

import "golang.org/x/sys/windows"

// Live reports whether pid is a running process: it can be opened
// (or exists but is not ours to open) and has no exit code yet
// (STILL_ACTIVE, 259).
func Live(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err == windows.ERROR_ACCESS_DENIED
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259
}
