package transport

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
)

// ProcessConfig says how to start a program with raw pipes (StartProcess).
type ProcessConfig struct {
	// Argv is the program and its arguments. No shell is involved.
	Argv []string
	// Dir is the working directory ("" means sonde's own).
	Dir string
	// Env is the program's complete environment. Nil means sonde's own
	// environment, unchanged (StartStdio passes the allow-listed one).
	Env []string
}

// Process is a program started in a process group of its own (a job
// object on Windows) with its standard streams as raw pipes: the server
// of a stdio session (StartStdio builds on it) or of a tap, which forwards
// the bytes itself. MarkEnv is added to its environment, and when it ends,
// Wait stops what it left behind as Close does for a session: the rest of
// its group, and on Linux the processes that left the group but carry its
// mark or hold its pipes, or are in its cgroup (where sonde may make one).
type Process struct {
	// Stdin is the write end of the program's stdin; closing it is the
	// end of input for the program.
	Stdin *os.File
	// Stdout and Stderr are the read ends of the program's stdout and
	// stderr. They stay open after Wait (closing them is the caller's).
	Stdout *os.File
	Stderr *os.File

	cmd   *exec.Cmd
	pid   int
	group procGroup
	mark  string   // MarkEnv's value in the program's environment
	cg    *cgroup  // its cgroup (Linux, where sonde may make one), or nil
	pipes []string // its stdout and stderr as sweep knows them (Linux)
	born  uint64   // its start time as sweep knows it (Linux; 0: unknown)

	waitOnce sync.Once
	ended    Ended
	reaped   atomic.Bool // Wait has reaped it: its group id may be reused
}

// Ended is how a Process ended.
type Ended struct {
	// Code is the exit code, or -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended the process ("" if none; always
	// "" on Windows).
	Signal string
	// Status is what a shell reports: Code, or 128 plus the signal's
	// number when a signal ended the process.
	Status int
	// Left are the processes the program left running when it ended,
	// which Wait then stopped: the rest of its process group (Linux,
	// macOS) and, on Linux, those that had left it (see sweep). Empty is
	// the clean case.
	Left []ProcStat
}

// StartProcess starts cfg.Argv as the first member of a new process group
// (a job object on Windows) with three fresh pipes as its stdin, stdout and
// stderr. Failures to start are *SpawnError.
func StartProcess(cfg ProcessConfig) (*Process, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, &SpawnError{Reason: SpawnBadConfig, Err: errors.New("no server command given (use: sonde ... -- COMMAND [ARG...])")}
	}
	if err := checkDir(cfg.Dir); err != nil {
		return nil, &SpawnError{Argv0: cfg.Argv[0], Reason: SpawnBadDir, Err: err}
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	return startProcess(cfg.Argv, cfg.Dir, env)
}

// startProcess starts argv in its own group with env (MarkEnv added) and
// three pipes.
func startProcess(argv []string, dir string, env []string) (*Process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, &SpawnError{Argv0: argv[0], Err: err}
	}
	p := &Process{mark: newMark()}
	command := func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, append(slices.Clip(env), MarkEnv+"="+p.mark)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
		return cmd
	}
	// In a cgroup of its own where sonde may make one (Linux); when the
	// start into it fails (a kernel without clone3, a cgroup it may not
	// move a process into), once more without.
	p.cg = newCgroup(p.mark)
	cmd := command()
	p.cg.attach(cmd)
	group, err := startGroup(cmd)
	if err != nil && p.cg != nil {
		p.cg.remove()
		p.cg = nil
		cmd = command()
		group, err = startGroup(cmd)
	}
	if err != nil {
		closeAll()
		return nil, classifySpawn(argv[0], err)
	}
	// The child holds its own copies; ours would keep the pipes open.
	inR.Close()
	outW.Close()
	errW.Close()
	p.cmd, p.pid, p.group = cmd, cmd.Process.Pid, group
	p.Stdin, p.Stdout, p.Stderr = inW, outR, errR
	p.pipes = pipeIDs(outR, errR)
	p.born = startTime(p.pid)
	return p, nil
}

// Pid returns the program's process id (also its process group id on
// Unix, and its console process group id on Windows).
func (p *Process) Pid() int { return p.pid }

// Wait waits for the program to end, then stops what it left behind: the
// rest of its group (SIGKILL; TerminateJobObject on Windows) and, on
// Linux, the processes that carry its mark or hold its stdout or stderr
// (sweep), and those in its cgroup. Concurrent and repeated calls return
// the same Ended.
func (p *Process) Wait() Ended {
	p.waitOnce.Do(func() {
		_ = p.cmd.Wait()
		code, sig := exitStatus(p.cmd.ProcessState)
		p.ended = Ended{Code: code, Signal: sig, Status: shellStatus(p.cmd.ProcessState)}
		p.ended.Left = groupMembers(p.pid) // named before they are stopped
		_ = p.group.kill()                 // orphans left by the program; none is the normal case
		p.reaped.Store(true)
		p.group.release()
		left := sweep(p.mark, p.pipes, p.born) // and those that left the group
		left = append(left, p.cg.sweep()...)   // even unmarked, without its pipes
		p.cg.remove()
		for _, st := range left {
			if !slices.ContainsFunc(p.ended.Left, func(l ProcStat) bool { return l.Pid == st.Pid }) {
				p.ended.Left = append(p.ended.Left, st)
			}
		}
	})
	return p.ended
}

// Signal sends sig to the program's group, as a signal given to the
// program itself would be passed on by a shell's job control. On Windows,
// os.Interrupt and syscall.SIGTERM become CTRL_BREAK_EVENT to its console
// process group and os.Kill ends its job object; other signals cannot be
// sent there (an error). Once the program is reaped, Signal does nothing.
func (p *Process) Signal(sig os.Signal) error {
	if p.reaped.Load() {
		return nil
	}
	return p.group.send(sig)
}

// Stop asks the whole group to end: SIGTERM on Unix, CTRL_BREAK_EVENT on
// Windows (Close's graceful step).
func (p *Process) Stop() error {
	if p.reaped.Load() {
		return nil
	}
	return p.group.stop()
}

// Kill ends the whole group at once: SIGKILL on Unix, TerminateJobObject
// on Windows (Close's hard step).
func (p *Process) Kill() error {
	if p.reaped.Load() {
		return nil
	}
	return p.group.kill()
}

// StopName and KillName name Stop's and Kill's steps on this OS, as the
// EventSignal events of a stdio session name them ("SIGTERM", "SIGKILL";
// "CTRL_BREAK_EVENT", "TerminateJobObject").
const (
	StopName = stopName
	KillName = killName
)
