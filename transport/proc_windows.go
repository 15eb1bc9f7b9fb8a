//go:build windows

package transport

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The steps of Close on Windows (see docs/internals.md, "Process cleanup
// on each OS").
const (
	stopName = "CTRL_BREAK_EVENT"
	killName = "TerminateJobObject"
)

// killedCode is the exit code TerminateJobObject gives every process it
// ends (Windows has no signals to report instead).
const killedCode = 1

// job is the job object holding the server and everything it starts: a
// child process is put in its parent's job by Windows itself, and the job
// allows no breakaway. The server is also the root of a new console process
// group (CREATE_NEW_PROCESS_GROUP), whose id is its pid, for the graceful
// CTRL_BREAK_EVENT.
type job struct {
	pid uint32
	mu  sync.Mutex
	h   windows.Handle // the job; 0 once released
	// proc is a handle to the server process, held until release: while it
	// is open, Windows does not give the server's pid (its console process
	// group id) to another process, and stop can tell whether the server
	// still runs.
	proc windows.Handle
}

// startGroup creates a job object that kills its processes when its last
// handle is closed, starts cmd suspended, puts it in the job and only then
// lets it run, so that nothing it starts can escape the job.
func startGroup(cmd *exec.Cmd) (procGroup, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a job object for the server: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(h)
		return nil, fmt.Errorf("set up the server's job object: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		_ = windows.CloseHandle(h)
		return nil, err
	}
	j := &job{pid: uint32(cmd.Process.Pid), h: h}
	if err := j.adopt(); err != nil {
		// The server never ran a single instruction: end it and report.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		j.release()
		return nil, err
	}
	return j, nil
}

// adopt puts the suspended server in the job and resumes it.
func (j *job) adopt() error {
	const access = windows.PROCESS_SET_QUOTA | windows.PROCESS_TERMINATE |
		windows.SYNCHRONIZE | windows.PROCESS_QUERY_LIMITED_INFORMATION
	p, err := windows.OpenProcess(access, false, j.pid)
	if err != nil {
		return fmt.Errorf("open the server process: %w", err)
	}
	j.proc = p
	if err := windows.AssignProcessToJobObject(j.h, p); err != nil {
		return fmt.Errorf("put the server in its job object: %w", err)
	}
	return resumeThreads(j.pid)
}

// resumeThreads resumes the threads of process pid (a process created
// suspended has one; os/exec does not keep its handle, so it is found by a
// snapshot of the system's threads).
func resumeThreads(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list the server's threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, terr := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if terr != nil {
			return fmt.Errorf("resume the server: %w", terr)
		}
		_, terr = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if terr != nil {
			return fmt.Errorf("resume the server: %w", terr)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("list the server's threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("resume the server: its thread was not found")
	}
	return nil
}

// stop sends CTRL_BREAK_EVENT to the server's console process group. It
// reaches the server only when sonde has a console (a terminal) to share
// with it; otherwise it fails and Close's hard step follows its grace
// period. It is sent only while the server runs: aimed at a group that no
// longer exists, the event could reach every process of the console,
// sonde included.
func (j *job) stop() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil
	}
	if ev, err := windows.WaitForSingleObject(j.proc, 0); err != nil || ev != uint32(windows.WAIT_TIMEOUT) {
		return err // ended (or cannot tell): nothing to ask
	}
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, j.pid)
}

// kill terminates every process in the job.
func (j *job) kill() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil
	}
	return windows.TerminateJobObject(j.h, killedCode)
}

// send passes a signal on as Windows can: os.Interrupt and SIGTERM (what
// Go delivers for Ctrl-C, Ctrl-Break, a closed console, logoff and
// shutdown) are stop, a CTRL_BREAK_EVENT to the server's console process
// group; os.Kill is kill. Nothing else can be sent.
func (j *job) send(sig os.Signal) error {
	switch sig {
	case os.Interrupt, syscall.SIGTERM:
		return j.stop()
	case os.Kill:
		return j.kill()
	}
	return fmt.Errorf("cannot send %v to the server on Windows", sig)
}

// release closes the job handle (with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
// that would also end any process still in it) and the process handle.
func (j *job) release() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h != 0 {
		_ = windows.CloseHandle(j.h)
		j.h = 0
	}
	if j.proc != 0 {
		_ = windows.CloseHandle(j.proc)
		j.proc = 0
	}
}

// shellStatus is the exit code: Windows has no signals.
func shellStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	return ps.ExitCode()
}

// exitStatus returns the exit code; Windows has no signals to name.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
