package sessions

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// A Follower reads a recording that is still being written (sonde watch,
// sonde mcp's session_open): at its end it waits for more, looking again
// every poll, until ctx ends or the tap that writes it (pid, when known:
// > 0) is gone and nothing more came; then it reads io.EOF. It is what
// capture.NewReader reads a live session through.
type Follower struct {
	ctx      context.Context
	r        io.Reader
	pid      int
	poll     time.Duration
	once     sync.Once
	caughtUp chan struct{}
}

// NewFollower follows r, written by the tap whose pid is pid (0: not
// known, follow until ctx ends).
func NewFollower(ctx context.Context, r io.Reader, pid int, poll time.Duration) *Follower {
	return &Follower{ctx: ctx, r: r, pid: pid, poll: poll, caughtUp: make(chan struct{})}
}

// CaughtUp is closed the first time the follower reaches the end of what
// was written (or once Done was called).
func (r *Follower) CaughtUp() <-chan struct{} { return r.caughtUp }

// Done closes CaughtUp if it is not yet: the follow ended before it
// caught up.
func (r *Follower) Done() { r.once.Do(func() { close(r.caughtUp) }) }

// Read reads what was written, waiting at the end for more.
func (r *Follower) Read(p []byte) (int, error) {
	for {
		n, err := r.r.Read(p)
		if n > 0 || (err != nil && !errors.Is(err, io.EOF)) {
			return n, err
		}
		r.Done()
		if r.pid > 0 && !Live(r.pid) {
			// The tap is gone: what it wrote before it went is there now.
			if n, _ := r.r.Read(p); n > 0 {
				return n, nil
			}
			return 0, io.EOF
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(r.poll):
		}
	}
}
