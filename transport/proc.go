package transport

import "os"

// procGroup is everything one server runs as: the server process and every
// process it starts. Each OS implements it (proc_unix.go: a process group;
// proc_windows.go: a job object; proc_other.go: the server process alone),
// together with
//
//	startGroup(cmd *exec.Cmd) (procGroup, error)
//
// which starts cmd as the first member of a new group (its errors are those
// of cmd.Start, or of setting the group up),
//
//	shellStatus(ps *os.ProcessState) int
//
// the exit status a shell reports (128 plus the signal's number for a
// process a signal ended), and the names of the two steps
// as they appear in EventSignal events: stopName and killName.
//
// stdio.go uses only this: stop is Close's graceful step, kill its hard step
// and the clean-up of whatever the server left behind once it is reaped.
type procGroup interface {
	// stop asks every process of the group to end (SIGTERM on Unix,
	// CTRL_BREAK_EVENT on Windows).
	stop() error
	// kill ends every process of the group at once (SIGKILL on Unix,
	// TerminateJobObject on Windows). A group already gone is not an error.
	kill() error
	// send passes a signal on to the group (Process.Signal): the signal
	// itself on Unix; on Windows, os.Interrupt and SIGTERM are stop and
	// os.Kill is kill.
	send(sig os.Signal) error
	// release frees what the group holds (the job handle on Windows). It is
	// called once the server is reaped and kill has run; stop and kill do
	// nothing after it.
	release()
}
