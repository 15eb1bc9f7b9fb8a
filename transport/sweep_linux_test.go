package transport

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestSweepSparesOwnChildren: a process sonde started itself that holds a
// server's pipe (another server, caught between fork and exec while the
// servers of sonde doctor start side by side) is not the server's: the
// sweep leaves it alone, and still kills a process further down that holds
// the pipe.
func TestSweepSparesOwnChildren(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// sh holds the pipe as fd 3 and starts a sleep that inherits it.
	cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
	cmd.ExtraFiles = []*os.File{r}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(strings.TrimSpace(line))

	killed := sweep("no-such-mark", pipeIDs(r), 0)
	if len(killed) != 1 || killed[0].Pid != grandchild {
		t.Errorf("sweep killed %v, want only the grandchild %d (not sonde's own child %d)", killed, grandchild, cmd.Process.Pid)
	}
}

// TestSweepAfterPipesClosed: a caller may close a server's stdout and
// stderr before Wait (the tap does once its host stops reading). The sweep
// still knows the server's pipes, named when it started, and finds a
// daemon that holds one though it cleared its environment. (It read the
// files at Wait: a closed one names nothing, so the daemon was missed, and
// the read raced with the close under -race.)
func TestSweepAfterPipesClosed(t *testing.T) {
	p, err := StartProcess(ProcessConfig{Argv: []string{"sh", "-c", "env -i setsid sleep 60 </dev/null 2>/dev/null & echo $!; read line"}})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	daemon, _ := strconv.Atoi(strings.TrimSpace(line))
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGKILL); _ = p.Stdin.Close(); p.Wait() })
	p.Stdout.Close()
	p.Stderr.Close()

	// The pipe alone must find it: the cgroup (which would also) is not asked.
	killed := sweep("no-such-mark", p.pipes, p.born)
	if len(killed) != 1 || killed[0].Pid != daemon {
		t.Fatalf("sweep killed %v, want the daemon %d that holds the server's stdout", killed, daemon)
	}
}

// BenchmarkEndSweep is what Wait pays after a server that left nothing
// behind has ended: naming the rest of its process group, and the sweep
// for processes that left the group (the cgroup's check aside).
func BenchmarkEndSweep(b *testing.B) {
	p, err := StartProcess(ProcessConfig{Argv: []string{"true"}})
	if err != nil {
		b.Fatal(err)
	}
	if left := p.Wait().Left; len(left) != 0 {
		b.Fatalf("true left %v", left)
	}
	for b.Loop() {
		if left := append(groupMembers(p.pid), sweep(p.mark, p.pipes, p.born)...); len(left) != 0 {
			b.Fatalf("found %v", left)
		}
	}
}
