package client

// The text of a timeout snapshot, what an error message and the UI show
// of it: it reads only the Snapshot (and Late), never the Client.

import (
	"fmt"
	"strings"
	"time"
)

// Summary is the snapshot in one line, for the error's message.
func (s *Snapshot) Summary() string {
	var b strings.Builder
	since := s.At.Sub(s.Queued)
	switch s.Kind {
	case SnapBlocked:
		why := "the server stopped reading its stdin"
		if s.HTTP != nil {
			why = "the server does not read the request's body"
		}
		if s.Written == "blocked" {
			fmt.Fprintf(&b, "blocked: the request is not fully written (the write has waited %s: %s)", rd(s.BlockedFor), why)
		} else {
			fmt.Fprintf(&b, "blocked: the request was never written (an earlier write has waited %s: %s)", rd(s.BlockedFor), why)
		}
	case SnapBusy:
		fmt.Fprintf(&b, "busy: the server used %s of CPU in the %s before the deadline", rd(s.CPU), rd(s.CPUWindow))
		if s.CPUWait > s.CPU {
			fmt.Fprintf(&b, " and its threads waited %s in all for a CPU (this machine is loaded)", rd(s.CPUWait))
		}
	case SnapSleeping:
		fmt.Fprintf(&b, "sleeping: the server runs but used %s of CPU in %s (it waits for something)", rd(s.CPU), rd(s.CPUWindow))
	case SnapStopped:
		b.WriteString("stopped: the server process is stopped (a signal or a debugger) and cannot run")
	case SnapDead:
		b.WriteString("dead: the server process is gone")
	case SnapNoHeaders:
		b.WriteString("no headers: the POST was sent, no response headers came")
	case SnapStreamOpen:
		b.WriteString("stream open: the response stream stayed open without the answer")
		if s.HTTP != nil && !s.HTTP.LastEvent.IsZero() {
			fmt.Fprintf(&b, " (last event %s before the deadline)", rd(s.At.Sub(s.HTTP.LastEvent)))
		}
	default:
		b.WriteString("unknown")
		if s.ProcErr != "" {
			b.WriteString(" (" + s.ProcErr + ")")
		}
	}
	b.WriteString("; last message from the server ")
	b.WriteString(s.ago(s.LastStdout))
	if s.Progress > 0 {
		fmt.Fprintf(&b, "; %d progress, the last %s", s.Progress, s.ago(s.LastProgress))
	} else {
		b.WriteString("; no progress")
	}
	if s.StderrBytes > 0 {
		fmt.Fprintf(&b, "; %d bytes on stderr in the %s since it was sent", s.StderrBytes, rd(since))
	}
	return b.String()
}

// Lines is the snapshot as labelled lines, for a detail view. Stderr is
// server text: a terminal shows it escaped.
func (s *Snapshot) Lines() []string {
	out := []string{"snapshot: " + string(s.Kind)}
	add := func(label, text string) { out = append(out, fmt.Sprintf("  %-9s %s", label, text)) }
	switch s.Written {
	case "written":
		add("request", "written "+s.ago(s.Sent))
	case "blocked":
		add("request", "not fully written: the write has waited "+rd(s.BlockedFor))
	default:
		w := "never written"
		if s.BlockedFor > 0 {
			w += ": behind a write that has waited " + rd(s.BlockedFor)
		}
		add("request", w)
	}
	if s.HTTP != nil { // no process of sonde's: no stdout, no stderr
		add("messages", "last one "+s.ago(s.LastStdout))
	} else {
		add("stdout", "last message "+s.ago(s.LastStdout))
		st := "last write " + s.ago(s.LastStderr)
		if s.StderrBytes > 0 {
			st += fmt.Sprintf("; %d bytes since the request", s.StderrBytes)
		}
		add("stderr", st)
	}
	if s.Progress > 0 {
		add("progress", fmt.Sprintf("%d, the last %s", s.Progress, s.ago(s.LastProgress)))
	} else {
		add("progress", "none")
	}
	if len(s.Procs) > 0 {
		p := s.Procs[0]
		text := fmt.Sprintf("pid %d %s", p.Pid, p.State)
		if p.Name != "" {
			text = fmt.Sprintf("pid %d %s %s", p.Pid, p.Name, p.State)
		}
		if s.CPUWindow > 0 {
			text += fmt.Sprintf(", %s CPU in %s", rd(s.CPU), rd(s.CPUWindow))
			if s.CPUWait > 0 {
				text += fmt.Sprintf(" (%s waiting for a CPU)", rd(s.CPUWait))
			}
		}
		if len(s.Procs) > 1 {
			text += fmt.Sprintf(" (%d processes in its group)", len(s.Procs))
		}
		add("process", text)
	} else if s.ProcErr != "" {
		add("process", "unknown: "+s.ProcErr)
	}
	if h := s.HTTP; h != nil {
		text := "no response headers"
		if h.Status != 0 {
			text = fmt.Sprintf("HTTP %d %s", h.Status, s.ago(h.Headers))
			if h.SSE {
				text += "; SSE stream "
				if h.StreamEnded {
					text += "ended"
				} else {
					text += "open"
				}
				text += ", last event " + s.ago(h.LastEvent)
			}
		}
		add("http", text)
	}
	if len(s.Stderr) > 0 {
		add("stderr", "since the request: "+strings.TrimRight(string(s.Stderr), "\r\n"))
	}
	return out
}

// ago says when t was, counted back from the deadline.
func (s *Snapshot) ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	if d := s.At.Sub(t); d > 0 {
		return rd(d) + " before the deadline"
	}
	return "at the deadline"
}

// lateNote is the sentence for a response that came after its request
// timed out: how long after the deadline, and the --timeout that would
// have been enough.
func lateNote(l *Late) string {
	return fmt.Sprintf("; would have succeeded %s after the deadline (--timeout %s would have been enough)", rd(l.AfterDeadline), l.Enough)
}

// rd is a span as text: to 100 ms from a second up.
func rd(d time.Duration) string {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return roundDur(d).String()
}
