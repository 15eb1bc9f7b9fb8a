package sessions

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestFollowerReadsWhatIsAdded: a follower of a growing file reads what is
// added after it reached the end, closes CaughtUp at the end, and ends
// (io.EOF) when its context does.
func TestFollowerReadsWhatIsAdded(t *testing.T) {
	path, f := recording(t, "one\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fr := NewFollower(ctx, f, 0, time.Millisecond)
	buf := make([]byte, 64)
	if n, err := fr.Read(buf); err != nil || string(buf[:n]) != "one\n" {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	got := make(chan string, 1)
	go func() {
		n, _ := fr.Read(buf)
		got <- string(buf[:n])
	}()
	<-fr.CaughtUp()
	w, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("two\n")
	w.Close()
	if s := <-got; s != "two\n" {
		t.Fatalf("after the end it read %q, want the added line", s)
	}
	cancel()
	if n, err := fr.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after cancel: %d, %v; want io.EOF", n, err)
	}
}

// TestFollowerEndsWithItsTap: a follower whose tap (a real process that
// has exited) is gone reads to the end and then io.EOF, not forever.
func TestFollowerEndsWithItsTap(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	_, f := recording(t, "last\n")
	b, err := io.ReadAll(NewFollower(context.Background(), f, cmd.Process.Pid, time.Millisecond))
	if err != nil || string(b) != "last\n" {
		t.Fatalf("read %q, %v; want the file, then the end", b, err)
	}
}

// recording writes text to a file and opens it for reading (closed at
// the test's end).
func recording(t *testing.T, text string) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}
