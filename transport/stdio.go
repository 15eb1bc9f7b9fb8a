package transport

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Defaults for StdioConfig fields left zero.
const (
	DefaultStderrBytes = 64 << 10
	DefaultKillAfter   = 2 * time.Second
)

// StdioConfig says how to start a server as a subprocess.
type StdioConfig struct {
	// Argv is the program and its arguments. No shell is involved.
	Argv []string
	// Dir is the working directory ("" means sonde's own).
	Dir string
	// Env is the complete environment of the server (see BuildEnv). Nil
	// means the allow-listed part of sonde's environment.
	Env []string
	// MaxLineBytes caps one line on the server's stdout.
	MaxLineBytes int
	// StderrBytes caps the kept tail of the server's stderr.
	StderrBytes int
	// KillAfter is each grace period of Close: after closing stdin, and
	// after SIGTERM (CTRL_BREAK_EVENT on Windows).
	KillAfter time.Duration
	// Hide lists secret values (what a host config's references brought
	// into the command line) that the start event's Argv and a
	// *SpawnError's message show as Redacted wherever they occur.
	Hide []string
}

// shownArgv is argv with every value of hide replaced by Redacted.
func shownArgv(argv, hide []string) []string {
	out := append([]string(nil), argv...)
	for _, h := range hide {
		if h == "" {
			continue
		}
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], h, Redacted)
		}
	}
	return out
}

// Exit describes how a server process ended.
type Exit struct {
	Pid int
	// Code is the exit code, or -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended the process ("" if none).
	Signal string
	// Stderr is the tail of stderr at exit; StderrDropped counts the bytes
	// that did not fit in it.
	Stderr        []byte
	StderrDropped int64
	// ByClose is true when sonde's Close ended the session.
	ByClose bool
	// StdoutClosed is true when the server closed its stdout before exiting
	// (sonde then shut it down).
	StdoutClosed bool
	Time         time.Time
	// Left are the processes the server left running when it ended, which
	// sonde then stopped (Ended.Left).
	Left []ProcStat
}

// Status is a short description: "exit code 3" or "signal SIGKILL".
func (e Exit) Status() string {
	if e.Signal != "" {
		return "signal " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// ExitError is the terminal error of a stdio Conn: the process has ended.
type ExitError struct{ Exit Exit }

// Error describes the exit: what happened, then the status.
func (e *ExitError) Error() string { return e.Exit.What() + " (" + e.Exit.Status() + ")" }

// What says how the session ended, without the status: "server exited",
// "server stopped by sonde" or "server closed its stdout".
func (e Exit) What() string {
	switch {
	case e.ByClose:
		return "server stopped by sonde"
	case e.StdoutClosed:
		return "server closed its stdout"
	}
	return "server exited"
}

// Stdio is a Conn to a server running as a subprocess, speaking
// newline-delimited JSON-RPC on its stdin and stdout.
type Stdio struct {
	cfg    StdioConfig
	obs    Observer
	proc   *Process
	pid    int
	group  procGroup
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	lines  *LineReader
	tail   *Tail

	writeMu  sync.Mutex
	writeBuf []byte // WriteBatch's buffer, kept between writes (guarded by writeMu)

	stderrDone chan struct{} // stderr reader finished
	stdoutDone chan struct{} // Read saw the end of stdout
	stdoutOnce sync.Once
	exited     chan struct{} // exit is set
	exit       Exit
	waitDone   chan struct{} // waiter finished, every fd closed

	closing     atomic.Bool
	stdoutFirst atomic.Bool
	closeOnce   sync.Once
	closeDone   chan struct{}
}

// MarkEnv names the variable sonde adds to every server's environment: a
// random value per server, inherited by whatever the server starts, by
// which sonde finds (on Linux) the processes a server left behind outside
// its process group when it ends.
const MarkEnv = "SONDE_SERVER_MARK"

// newMark returns a fresh random MarkEnv value.
func newMark() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// StartStdio starts the server and returns its connection. Failures to start
// are *SpawnError. obs may be nil.
func StartStdio(cfg StdioConfig, obs Observer) (*Stdio, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, &SpawnError{Reason: SpawnBadConfig, Err: errors.New("no server command given (use: sonde ... -- COMMAND [ARG...])")}
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = DefaultMaxLineBytes
	}
	if cfg.StderrBytes <= 0 {
		cfg.StderrBytes = DefaultStderrBytes
	}
	if cfg.KillAfter <= 0 {
		cfg.KillAfter = DefaultKillAfter
	}
	if obs == nil {
		obs = func(Event) {}
	}
	if err := checkDir(cfg.Dir); err != nil {
		return nil, &SpawnError{Argv0: cfg.Argv[0], Reason: SpawnBadDir, Err: err, Hide: cfg.Hide}
	}
	if cfg.Env == nil {
		cfg.Env, _ = BuildEnv(os.Environ(), nil, nil)
	}
	s := &Stdio{
		cfg: cfg, obs: obs, tail: NewTail(cfg.StderrBytes),
		stderrDone: make(chan struct{}), stdoutDone: make(chan struct{}),
		exited: make(chan struct{}), waitDone: make(chan struct{}), closeDone: make(chan struct{}),
	}
	if err := s.start(); err != nil {
		var se *SpawnError
		if errors.As(err, &se) {
			se.Hide = cfg.Hide
		}
		return nil, err
	}
	obs(Event{Kind: EventStart, Time: time.Now(), Pid: s.pid, Argv: shownArgv(cfg.Argv, cfg.Hide)})
	go s.readStderr()
	go s.wait()
	return s, nil
}

func (s *Stdio) start() error {
	p, err := startProcess(s.cfg.Argv, s.cfg.Dir, s.cfg.Env)
	if err != nil {
		return err
	}
	s.proc, s.pid, s.group = p, p.pid, p.group
	s.stdin, s.stdout, s.stderr = p.Stdin, p.Stdout, p.Stderr
	s.lines = NewLineReader(p.Stdout, s.cfg.MaxLineBytes)
	return nil
}

// Pid returns the server's process id (also its process group id on Unix,
// and its console process group id on Windows).
func (s *Stdio) Pid() int { return s.pid }

func (s *Stdio) readStderr() {
	defer close(s.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stderr.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...)
			s.tail.Write(chunk)
			s.obs(Event{Kind: EventStderr, Time: time.Now(), Pid: s.pid, Data: chunk})
		}
		if err != nil {
			return
		}
	}
}

// wait reaps the process, ends whatever it left in its group, drains
// stderr, publishes the exit, and closes the read ends of the pipes once
// they are drained (or after a grace period, if something outside the group
// still holds them).
func (s *Stdio) wait() {
	defer close(s.waitDone)
	ended := s.proc.Wait() // and what it left in its group, or (Linux) outside it
	code, sig := ended.Code, ended.Signal
	grace := s.cfg.KillAfter
	if !waitFor(s.stderrDone, grace) {
		s.stderr.Close()
		<-s.stderrDone
	}
	s.stderr.Close()
	tail, dropped := s.tail.Snapshot()
	s.exit = Exit{
		Pid: s.pid, Code: code, Signal: sig, Stderr: tail, StderrDropped: dropped,
		ByClose: s.closing.Load() && !s.stdoutFirst.Load(), StdoutClosed: s.stdoutFirst.Load(), Time: time.Now(),
		Left: ended.Left,
	}
	close(s.exited)
	waitFor(s.stdoutDone, grace)
	s.stdout.Close()
}

func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// Read returns the next frame from the server's stdout. A line over the cap
// is a *LineTooLongError; the end of stdout is an *ExitError once the process
// has ended (if the server closed stdout but kept running, Read shuts it
// down first).
func (s *Stdio) Read() (Frame, error) {
	line, err := s.lines.ReadLine()
	switch {
	case err == nil:
		return NewInFrame(line, time.Now()), nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		f := NewInFrame(line, time.Now())
		if f.Err != nil {
			f.Err = &jsonrpc.DecodeError{Class: jsonrpc.ClassNotJSON, Reason: IncompleteLineReason}
		}
		return f, nil
	case errors.Is(err, ErrLineTooLong):
		return Frame{}, err
	}
	s.stdoutOnce.Do(func() { close(s.stdoutDone) })
	// A server that exits closes stdout a moment before it is reaped: give
	// it the grace period before concluding that it closed stdout and kept
	// running (then shut it down).
	if !s.closing.Load() && !waitFor(s.exited, s.cfg.KillAfter) {
		s.stdoutFirst.Store(true)
		go s.Close()
	}
	<-s.exited
	return Frame{}, &ExitError{Exit: s.exit}
}

// IncompleteLineReason is the DecodeError reason of the last line of stdout
// when it has no newline and is not a whole message: the server stopped
// mid-message (its exit, not the cut line, is what ends its requests).
const IncompleteLineReason = "incomplete line at the end of stdout (the server stopped mid-message)"

// ErrStdinClosed is returned by Write once the server's stdin is closed.
var ErrStdinClosed = errors.New("server stdin is closed")

// Write sends raw and a newline to the server's stdin as one write.
func (s *Stdio) Write(raw []byte) error {
	return s.WriteBatch([][]byte{raw})
}

// keepWriteBuf is the largest write buffer Stdio keeps between writes; a
// larger one (a huge request) is dropped once written.
const keepWriteBuf = 256 << 10

// WriteBatch sends each message of raws followed by a newline, all in one
// write system call (BatchWriter): the messages a client had queued go out
// together instead of one call each.
func (s *Stdio) WriteBatch(raws [][]byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	buf := s.writeBuf[:0]
	for _, raw := range raws {
		buf = append(buf, raw...)
		buf = append(buf, '\n')
	}
	_, err := s.stdin.Write(buf)
	if cap(buf) <= keepWriteBuf {
		s.writeBuf = buf[:0]
	} else {
		s.writeBuf = nil
	}
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			return ErrStdinClosed
		}
		return fmt.Errorf("write to server stdin: %w", err)
	}
	return nil
}

// Close stops the server: close its stdin, wait KillAfter, SIGTERM its
// process group, wait KillAfter again, SIGKILL the group, and reap (on
// Windows: CTRL_BREAK_EVENT, then TerminateJobObject on its job object). It
// returns once the process is gone and every pipe is closed. Concurrent and
// repeated calls wait for the same close.
func (s *Stdio) Close() error { return s.shutdown(true) }

// Abort stops a server whose output can no longer be trusted (a line over
// the cap, --strict corruption): as Close, but SIGTERM comes at once, not
// after a grace period with stdin closed.
func (s *Stdio) Abort() error { return s.shutdown(false) }

func (s *Stdio) shutdown(graceful bool) error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.stdin.Close()
		if !graceful || !waitFor(s.exited, s.cfg.KillAfter) {
			s.step(stopName, s.group.stop)
			if !waitFor(s.exited, s.cfg.KillAfter) {
				s.step(killName, s.group.kill)
				<-s.exited
			}
		}
		<-s.waitDone
		close(s.closeDone)
	})
	<-s.closeDone
	return nil
}

// Kill sends SIGKILL to the server's process group (terminates its job
// object on Windows) at once, without the grace periods of Close (for a
// user who interrupts twice). Close still does the reaping.
func (s *Stdio) Kill() {
	select {
	case <-s.exited:
	default:
		s.step(killName, s.group.kill)
	}
}

// step reports one step of stopping the server (a signal on Unix) and takes it.
func (s *Stdio) step(name string, do func() error) {
	s.obs(Event{Kind: EventSignal, Time: time.Now(), Pid: s.pid, Signal: name})
	_ = do()
}
