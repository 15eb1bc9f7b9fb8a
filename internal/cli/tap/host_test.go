package tap_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// host is a stand-in for an MCP host: it runs argv (the fixture, or
// sonde tap in front of it) as a real subprocess, writes lines to its
// stdin, and keeps every byte of its stdout and stderr.
type host struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	out    bytes.Buffer
	errb   bytes.Buffer
	grew   chan struct{} // signalled on each stdout read
	readWG sync.WaitGroup
	done   chan struct{}
	err    error
}

// pipedTap starts sonde tap args (this test binary re-executed as sonde)
// with its stdin and stdout left to the caller, who plays the host and
// reads the host's side as raw bytes; stderr goes to the returned buffer,
// to read once the tap has ended.
func pipedTap(t *testing.T, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout io.ReadCloser, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], append([]string{"tap"}, args...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	stdin, _ = cmd.StdinPipe()
	stdout, _ = cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout, stderr
}

func startHost(t *testing.T, env []string, argv ...string) *host {
	t.Helper()
	h := &host{t: t, grew: make(chan struct{}, 1), done: make(chan struct{})}
	h.cmd = exec.Command(argv[0], argv[1:]...)
	h.cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), env...)
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, _ := h.cmd.StdoutPipe()
	stderr, _ := h.cmd.StderrPipe()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.readWG.Add(2)
	go h.read(stdout, &h.out, true)
	go h.read(stderr, &h.errb, false)
	go func() {
		h.readWG.Wait()
		h.err = h.cmd.Wait()
		close(h.done)
	}()
	t.Cleanup(func() {
		select {
		case <-h.done:
		case <-time.After(20 * time.Second):
			h.cmd.Process.Kill()
			<-h.done
			t.Errorf("%v did not end", argv[:2])
		}
	})
	return h
}

func (h *host) read(r io.Reader, into *bytes.Buffer, notify bool) {
	defer h.readWG.Done()
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			h.mu.Lock()
			into.Write(buf[:n])
			h.mu.Unlock()
			if notify {
				select {
				case h.grew <- struct{}{}:
				default:
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (h *host) write(lines ...string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, strings.Join(lines, "\n")+"\n"); err != nil {
		h.t.Fatalf("write to stdin: %v", err)
	}
}

// await waits until stdout holds want at least n times.
func (h *host) await(want string, n int) {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	// Counted as bytes.Count does, but only over what came since the
	// last look: counting all of a 40 MiB stdout again on each 64 KiB
	// read took the test past its deadline on a loaded machine.
	w := []byte(want)
	got, pos := 0, 0
	for {
		h.mu.Lock()
		b := h.out.Bytes()
		for {
			i := bytes.Index(b[pos:], w)
			if i < 0 {
				break
			}
			got, pos = got+1, pos+i+len(w)
		}
		pos = max(pos, len(b)-len(w)+1)
		h.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-h.grew:
		case <-h.done:
			h.t.Fatalf("stdout ended before %d × %q:\n%.2000s", n, want, h.stdoutText())
		case <-deadline:
			h.t.Fatalf("no %d × %q on stdout:\n%.2000s", n, want, h.stdoutText())
		}
	}
}

func (h *host) stdoutText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String()
}

// wait waits for the process to end and returns its exit status.
func (h *host) wait() int {
	h.t.Helper()
	select {
	case <-h.done:
	case <-time.After(20 * time.Second):
		h.t.Fatal("the process did not end")
	}
	return h.cmd.ProcessState.ExitCode()
}

func (h *host) stdout() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.out.Bytes())
}

func (h *host) stderr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.errb.String()
}

// readCapture reads a capture's records (failing on a reader warning).
func readCapture(t *testing.T, path string) []capture.Record {
	t.Helper()
	_, recs := capturetest.Records(t, path)
	return recs
}

// awaitStderr waits until stderr holds at least n bytes.
func (h *host) awaitStderr(n int) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(h.stderr()) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("stderr: %d bytes, want %d", len(h.stderr()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
