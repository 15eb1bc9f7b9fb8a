package transport

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

	killed := sweep("no-such-mark", []*os.File{r})
	if len(killed) != 1 || killed[0].Pid != grandchild {
		t.Errorf("sweep killed %v, want only the grandchild %d (not sonde's own child %d)", killed, grandchild, cmd.Process.Pid)
	}
}
