package tap

import (
	"bufio"
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestInjectNoDeadlockSingleThreaded: an injected request in flight, a
// host that writes a 1 MiB request, and a single-threaded server (the
// fixture's single-threaded fault: it reads one line, answers it and
// writes about 400 KiB of log notifications, and only then reads again).
// The server's stdin is full while it writes, so the tap's write of the
// host's request blocks; the tap must go on reading the server's stdout
// all the same, or the server never reads again and the host's session
// hangs for good. The host gets every answer and notification and never
// the injected answer; the injected request is answered.
func TestInjectNoDeadlockSingleThreaded(t *testing.T) {
	argv, pids := fixturetest.Argv(t, "--fault", "single-threaded", "--flood-count", "4000")
	opts := Options{
		Argv: argv,
		Env:  append(os.Environ(), fixturetest.ChildEnv()...),
	}
	in := NewInjector()
	opts.Injector = in
	hostIn, toTap, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromTap, hostOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := Run(opts, hostIn, hostOut, os.Stderr)
		hostOut.Close()
		done <- err
	}()
	deadline := time.After(60 * time.Second)
	stuck := func(what string) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, pid := range proctest.ReadPIDs(t, pids) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill() // unwinds the tap
			}
		}
		go io.Copy(io.Discard, fromTap) // the host reads again: the tap's forwarders end
		toTap.Close()
		<-done
		hostIn.Close()
		fromTap.Close()
		t.Fatalf("%s after 60 s: the session is deadlocked; goroutines:\n%s", what, buf)
	}

	// The host's handshake; the host does not read yet, so the server is
	// held in its notifications after the initialize answer, reading
	// nothing.
	if _, err := toTap.WriteString(initLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	injected := make(chan error, 1)
	go func() {
		a, err := in.Inject(context.Background(), []byte(`{"jsonrpc":"2.0","id":"mine","method":"ping"}`))
		if err == nil && !strings.Contains(string(a), `"id":"mine"`) {
			t.Errorf("injected answer %s", a)
		}
		injected <- err
	}()
	// Registered means written first: the host's next write comes after.
	for in.count.Load() == 0 {
		select {
		case <-deadline:
			stuck("the injected request was not written")
		case <-time.After(time.Millisecond):
		}
	}

	// The host's 1 MiB request, more than the pipes between it and the
	// server hold (64 KiB each, or 4 KiB on a machine whose user has used
	// up its pipe pages), so the tap's write to the server blocks while
	// the server writes. Once it is under way (two pieces written), the
	// host reads: the server's 400 KiB of notifications then come while
	// that write waits, and the tap must forward them all the same.
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}` + "\n"
	begun := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		const piece = 4 << 10
		var err error
		for off := 0; off < len(big) && err == nil; off += piece {
			_, err = toTap.WriteString(big[off:min(off+piece, len(big))])
			if off == piece {
				close(begun)
			}
		}
		wrote <- err
	}()
	select {
	case <-begun:
	case <-deadline:
		stuck("the host's request was not taken")
	}

	// Now the host reads.
	type seen struct{ answers, logs, injected int }
	got := make(chan seen, 1)
	go func() {
		var s seen
		sc := bufio.NewScanner(fromTap)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.Contains(line, `"id":"sonde-`), strings.Contains(line, `"id":"mine"`):
				s.injected++
			case strings.Contains(line, `"notifications/message"`):
				s.logs++
			case strings.Contains(line, `"result"`):
				s.answers++
			}
		}
		got <- s
	}()
	select {
	case err := <-injected:
		if err != nil {
			t.Fatalf("inject: %v", err)
		}
	case <-deadline:
		stuck("the injected request was not answered")
	}
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-deadline:
		stuck("the host's 1 MiB request was not written")
	}
	toTap.Close()
	var s seen
	select {
	case s = <-got:
	case <-deadline:
		stuck("the host's answers did not all come")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hostIn.Close()
	fromTap.Close()
	proctest.AssertGone(t, pids)
	if s.answers != 2 || s.logs != 3*4000 || s.injected != 0 {
		t.Errorf("the host got %d answers (want 2), %d notifications (want %d), %d injected lines (want 0)", s.answers, s.logs, 3*4000, s.injected)
	}
}
