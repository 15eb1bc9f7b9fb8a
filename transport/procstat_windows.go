//go:build windows

package transport

import (
	"errors"
	"time"

	"golang.org/x/sys/windows"
)

// statGroup asks for the server process's times (GetProcessTimes) and
// whether it still runs (GetExitCodeProcess). Windows does not say whether
// a process is computing or waiting: a live one is ProcUnknown, and its CPU
// time tells.
func statGroup(pid int) ([]ProcStat, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return []ProcStat{{Pid: pid, State: ProcGone}}, nil
		}
		return nil, err
	}
	defer windows.CloseHandle(h)
	st := ProcStat{Pid: pid, State: ProcUnknown}
	var code uint32
	if windows.GetExitCodeProcess(h, &code) == nil && code != 259 { // STILL_ACTIVE
		st.State = ProcGone
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err == nil {
		st.CPU = filetimeDur(kernel) + filetimeDur(user)
	}
	return []ProcStat{st}, nil
}

// filetimeDur is a FILETIME used as a span (100 ns units).
func filetimeDur(f windows.Filetime) time.Duration {
	return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100
}

// groupMembers is not read on Windows: the job object ends them all.
func groupMembers(pgid int) []ProcStat { return nil }
