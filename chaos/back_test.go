package chaos

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// TestBackAnswerNeverWaitsForServerStdin: an error rule on a server's
// request answers the server while the server's stdin (a real pipe) is
// full, as it is when a single-threaded server is busy writing. The
// server-to-host direction goes on forwarding what the server writes
// after the request, and the answer reaches the server once it reads
// again. (The answer was written from that direction itself: it waited
// for the stdin, so the server's stdout was no longer read, and neither
// moved again.)
func TestBackAnswerNeverWaitsForServerStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// Fill the server's stdin: nothing reads it yet.
	if err := w.SetWriteDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Skipf("no write deadline on a pipe here: %v", err)
	}
	filler := bytes.Repeat([]byte("f"), 1<<20)
	n, err := w.Write(filler)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("filling the pipe: %d bytes, %v", n, err)
	}
	if err := w.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var host proctest.Buffer
	var errw bytes.Buffer
	var notes []string
	p := engine(t, "error:to-host,method=roots/list,code=-32001,message=no roots").NewPipe(w, &host, &errw, 1<<20, Hooks{Note: func(n Note) {
		mu.Lock()
		notes = append(notes, n.Text)
		mu.Unlock()
	}})
	after := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"still writing"}}` + "\n"
	done := make(chan error, 1)
	go func() {
		_, err := p.ToHost.Write([]byte(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}` + "\n" + after))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server-to-host direction waited for the server's full stdin")
	}
	if got := host.String(); got != after {
		t.Fatalf("the host got %q, want only the line after the request %q", got, after)
	}

	// The server reads again: the filler, then the answer.
	br := bufio.NewReader(r)
	if _, err := br.Discard(n); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":"r1","error":{"code":-32001,"message":"no roots"}}` + "\n"; line != want {
		t.Fatalf("the server got %q, want %q", line, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], "answered") {
		t.Fatalf("notes %q", notes)
	}
	p.Close()
}

// TestBackAnswersBounded: answers waiting for a server that never reads
// hold at most MaxBackBytes; one past it is not sent, and a note says so.
func TestBackAnswersBounded(t *testing.T) {
	block := make(chan struct{})
	var notes []string
	var mu sync.Mutex
	p := engine(t, "error:to-host,method=roots/list,message="+strings.Repeat("m", MaxTextBytes)).NewPipe(blockingWriter(block), &bytes.Buffer{}, &bytes.Buffer{}, 1<<20, Hooks{Note: func(n Note) {
		mu.Lock()
		notes = append(notes, n.Text)
		mu.Unlock()
	}})
	var req bytes.Buffer
	answers := MaxBackBytes/MaxTextBytes + 64
	for i := range answers {
		req.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"roots/list"}` + "\n")
	}
	if _, err := p.ToHost.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	p.ToHost.bq.mu.Lock()
	held := p.ToHost.bq.bytes
	p.ToHost.bq.mu.Unlock()
	if held > MaxBackBytes {
		t.Errorf("%d bytes of answers wait, at most %d", held, MaxBackBytes)
	}
	mu.Lock()
	dropped := 0
	for _, n := range notes {
		if strings.Contains(n, "did not send an error answer") {
			dropped++
		}
	}
	mu.Unlock()
	if dropped == 0 {
		t.Error("no note of an answer not sent")
	}
	close(block) // the server reads: what waits is written, and the goroutine ends
	p.Close()
}

// blockingWriter blocks every write until its channel is closed.
type blockingWriter chan struct{}

func (b blockingWriter) Write(p []byte) (int, error) { <-b; return len(p), nil }
