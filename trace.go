package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/transport"
)

// tracer prints the client's events on a writer as they happen (--trace).
type tracer struct {
	sub  *client.Subscription
	done chan struct{}
}

func startTracer(c *client.Client, w io.Writer) *tracer {
	t := &tracer{sub: c.Subscribe(4096), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		var t0 time.Time
		var lastSeq uint64
		for ev := range t.sub.C {
			if t0.IsZero() {
				t0 = ev.Time
			}
			if lastSeq != 0 && ev.Seq != lastSeq+1 {
				fmt.Fprintf(w, "trace: %d events missed (output too slow)\n", ev.Seq-lastSeq-1)
			}
			lastSeq = ev.Seq
			if line := describeEvent(ev, t0); line != "" {
				fmt.Fprintln(w, line)
			}
		}
	}()
	return t
}

func (t *tracer) wait() { <-t.done }

// describeEvent renders one event as a line: time since t0, arrow, id,
// method, and what happened.
func describeEvent(ev client.Event, t0 time.Time) string {
	at := fmt.Sprintf("%9s", "+"+fmtDur(ev.Time.Sub(t0)))
	switch ev.Kind {
	case client.EvFrame:
		f := ev.Frame
		what := f.Msg.Method
		if what == "" {
			what = f.Msg.Kind.String()
		}
		id := ""
		if f.Msg.ID.IsValid() {
			id = "id " + f.Msg.ID.String()
		}
		detail := string(f.Verdict)
		if f.Detail != "" && f.Verdict != client.VerdictNotification {
			detail += ": " + f.Detail
		}
		return fmt.Sprintf("%s %s %-8s %-22s %6s  %s  %s", at, f.Dir.Arrow(), id, what, fmtSize(len(f.Raw)), detail, preview(f.Raw, 60))
	case client.EvRequest:
		r := ev.Req
		if r.State == client.StateQueued || r.State == client.StateSent {
			return ""
		}
		who := r.Method
		if r.Tool != "" {
			who += " " + r.Tool
		}
		dir := "   "
		if r.Dir == transport.In {
			dir = "srv"
		}
		line := fmt.Sprintf("%s %s %-8s %-22s %s", at, dir, idLabel(r), who, r.State)
		switch {
		case r.Progress != nil:
			line += fmt.Sprintf(" %g", r.Progress.Progress)
			if r.Progress.Total != nil {
				line += fmt.Sprintf("/%g", *r.Progress.Total)
			}
			if r.Progress.Message != "" {
				line += " " + r.Progress.Message
			}
		case r.State.Final() && r.Latency > 0:
			line += " after " + fmtDur(r.Latency)
		}
		if r.Err != nil {
			line += ": " + r.Err.Error()
		}
		return line
	case client.EvStderr:
		return at + " stderr " + strings.TrimRight(preview(ev.Stderr, 200), "\n")
	case client.EvProcess:
		p := ev.Proc
		switch p.What {
		case "start":
			return fmt.Sprintf("%s process started, pid %d: %s", at, p.Pid, strings.Join(p.Argv, " "))
		case "signal":
			return fmt.Sprintf("%s process %d sent %s", at, p.Pid, p.Signal)
		case "exit":
			return fmt.Sprintf("%s process %d ended: %s", at, p.Pid, p.Exit.Status())
		}
		if p.Err != nil {
			return at + " " + p.Err.Error()
		}
	case client.EvNote:
		return at + " note: " + ev.Note
	}
	return ""
}

func idLabel(r *client.ReqInfo) string {
	if !r.ID.IsValid() {
		return "-"
	}
	return "id " + r.ID.String()
}

// preview is a one-line, bounded rendering of raw bytes: control characters
// and invalid UTF-8 are escaped so the terminal shows exactly what was there.
func preview(b []byte, max int) string {
	var sb strings.Builder
	n := 0
	for len(b) > 0 && n < max {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		default:
			sb.WriteRune(r)
		}
		b = b[size:]
		n++
	}
	if len(b) > 0 {
		sb.WriteString("…")
	}
	return sb.String()
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

func fmtSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
