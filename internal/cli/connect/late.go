package connect

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// lateWatch follows a client for answers that come after their request
// timed out: each is printed on stderr as it arrives ("would have
// succeeded N after the deadline", and the --timeout that would have been
// enough). Close can wait for those still missing (--linger).
type lateWatch struct {
	c      *client.Client
	w      io.Writer
	follow *client.Following
	n      int // late answers seen
}

// lateShown is how many late answers are printed one by one; the rest
// are counted in one line at the end (a bench run may time out thousands).
const lateShown = 10

func startLateWatch(c *client.Client, w io.Writer) *lateWatch {
	l := &lateWatch{c: c, w: w}
	l.follow = client.FollowN(context.Background(), c, 1024, l)
	return l
}

// Apply prints a late answer, the first lateShown of them (client.Sink).
func (l *lateWatch) Apply(ev client.Event) {
	if ev.Kind != client.EvFrame || ev.Frame.Late == nil {
		return
	}
	if l.n++; l.n <= lateShown {
		fmt.Fprintln(l.w, "sonde: "+LateText(ev.Frame.Late))
	}
}

// LateText is the sentence for a late answer: "late answer: tools/call
// echo id 3 would have succeeded 2.1s after the deadline (--timeout 3.3s
// would have been enough)".
func LateText(l *client.Late) string {
	who := l.Method
	if l.Tool != "" {
		who += " " + l.Tool
	}
	what := "would have succeeded"
	if l.Error {
		what = "got its error answer"
	}
	return fmt.Sprintf("late answer: %s id %s %s %s after the deadline (--timeout %s would have been enough)",
		who, l.ID, what, l.AfterDeadline.Round(100*time.Millisecond), l.Enough)
}

// lingerPoll is how often linger looks at the client's counts.
const lingerPoll = 50 * time.Millisecond

// missing is how many requests timed out without an answer yet.
func (l *lateWatch) missing() uint64 {
	st := l.c.Stats()
	return st.Timeouts - min(st.LateTimeouts, st.Timeouts)
}

// linger waits up to d for the late answers still missing, saying so
// first; it returns at once when none is missing.
func (l *lateWatch) linger(d time.Duration) {
	n := l.missing()
	if n == 0 || d <= 0 {
		return
	}
	fmt.Fprintf(l.w, "sonde: waiting up to %s (--linger) for %d late answer(s)\n", d, n)
	end := time.Now().Add(d)
	tick := time.NewTicker(lingerPoll)
	defer tick.Stop()
	for l.missing() > 0 && time.Now().Before(end) {
		<-tick.C
	}
}

// wait returns once the watch has printed everything (its client closed).
func (l *lateWatch) wait() { l.follow.Wait() }

// End prints the count of the late answers not shown one by one
// (client.Ender).
func (l *lateWatch) End(uint64) {
	if l.n > lateShown {
		fmt.Fprintf(l.w, "sonde: and %d more late answers\n", l.n-lateShown)
	}
}
