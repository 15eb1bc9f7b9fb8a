package proctest

import (
	"bytes"
	"regexp"
	"sync"
)

// Buffer is a goroutine-safe buffer for what a process writes, to read
// while it still writes. A watched one (WatchBuffer)
// closes Hit the first time the written text matches its regexp.
type Buffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	watch *regexp.Regexp
	hit   chan struct{}
	seen  bool
}

// WatchBuffer is a Buffer watching for re.
func WatchBuffer(re string) *Buffer {
	return &Buffer{watch: regexp.MustCompile(re), hit: make(chan struct{})}
}

// Hit is closed once the text matches the watched regexp (never for a
// buffer that watches nothing).
func (s *Buffer) Hit() <-chan struct{} { return s.hit }

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.watch != nil && !s.seen && s.watch.Match(s.b.Bytes()) {
		s.seen = true
		close(s.hit)
	}
	return n, err
}

// String is the text written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
