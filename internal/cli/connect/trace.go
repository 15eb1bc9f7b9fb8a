package connect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// tracer prints the client's events on a writer as they happen (--trace).
type tracer struct {
	sub  *client.Subscription
	done chan struct{}
}

// startTracer prints c's events on w, one line each, with the secrets red
// knows (the capture's: --env and --pass-env values, headers, the bearer
// and OAuth tokens, --redact matches) replaced as in a capture: a server
// echoing one on stderr or in a result does not print it.
//
// Every second it also shows the budget left of each request in flight
// for a second or more (countdownLine; a JSON object with --json).
func startTracer(c *client.Client, w io.Writer, red *capture.Redactor, f *Flags) *tracer {
	t := &tracer{sub: c.Subscribe(4096), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		var t0 time.Time
		var lastSeq uint64
		inflight := budgets{}
		tick := time.NewTicker(countdownEvery)
		defer tick.Stop()
		for {
			var ev client.Event
			var ok bool
			select {
			case ev, ok = <-t.sub.C:
			case now := <-tick.C:
				printCountdown(w, inflight, now, t0, f.JSON)
				continue
			}
			if !ok {
				return
			}
			if t0.IsZero() {
				t0 = ev.Time
			}
			inflight.follow(ev)
			if lastSeq != 0 && ev.Seq != lastSeq+1 {
				fmt.Fprintf(w, "trace: %d events missed (output too slow)\n", ev.Seq-lastSeq-1)
			}
			lastSeq = ev.Seq
			if line := describeEvent(ev, t0); line != "" {
				line, _ = red.String(line)
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
	at := fmt.Sprintf("%9s", "+"+textfmt.Dur(ev.Time.Sub(t0)))
	switch ev.Kind {
	case client.EvFrame:
		return frameLine(at, ev.Frame)
	case client.EvRequest:
		return requestLine(at, ev.Req)
	case client.EvStderr:
		return at + " stderr " + strings.TrimRight(textfmt.Preview(ev.Stderr, 200), "\n")
	case client.EvProcess:
		p := ev.Proc
		switch p.What {
		case client.ProcStart:
			return fmt.Sprintf("%s process started, pid %d: %s", at, p.Pid, strings.Join(p.Argv, " "))
		case client.ProcConnect:
			return fmt.Sprintf("%s connecting to %s", at, strings.Join(p.Argv, " "))
		case client.ProcSignal:
			return fmt.Sprintf("%s process %d sent %s", at, p.Pid, p.Signal)
		case client.ProcExit:
			return fmt.Sprintf("%s process %d ended: %s", at, p.Pid, p.Exit.Status())
		}
		if p.Err != nil {
			return at + " " + p.Err.Error()
		}
	case client.EvNote:
		return at + " note: " + ev.Note
	case client.EvTask:
		return taskLine(at, ev.Task)
	case client.EvHTTP:
		line := at + " http " + ev.HTTP.Summary()
		for _, h := range ev.HTTP.Header {
			line += "\n" + strings.Repeat(" ", 15) + h
		}
		if len(ev.HTTP.Raw) > 0 {
			line += "\n" + strings.Repeat(" ", 15) + textfmt.Preview(ev.HTTP.Raw, 120)
		}
		return line
	}
	return ""
}

// frameLine is describeEvent's line of a frame.
func frameLine(at string, f *client.FrameInfo) string {
	what := f.Msg.Method
	if what == "" {
		what = f.Msg.Kind.String()
	}
	id := ""
	if f.Msg.ID.IsValid() {
		id = "id " + f.Msg.ID.String()
	}
	detail := string(f.Verdict)
	switch {
	case f.Detail == "" || f.Verdict == client.VerdictNotification:
	case f.VerdictInDetail:
		detail = f.Detail // "resolved id 3 after 2ms", not "resolved: resolved id 3 …"
	default:
		detail += ": " + f.Detail
	}
	if f.Stream != "" {
		detail += " [" + f.Stream
		if f.EventID != "" {
			detail += " event " + f.EventID
		}
		detail += "]"
	}
	return fmt.Sprintf("%s %s %-8s %-28s %7s  %s  %s", at, f.Dir.Arrow(), id, what, textfmt.Size(len(f.Raw)), detail, textfmt.Preview(f.Raw, 60))
}

// requestLine is describeEvent's line of a request's change of state
// ("" for queued and sent: their frame says it).
func requestLine(at string, r *client.ReqInfo) string {
	if r.State == client.StateQueued || r.State == client.StateSent {
		return ""
	}
	who := r.Method
	if r.Tool != "" {
		who += " " + r.Tool
	}
	dir := "   "
	if r.Dir == client.In {
		dir = "srv"
	}
	line := fmt.Sprintf("%s %s %-8s %-28s %s", at, dir, idLabel(r), who, r.State)
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
		line += " after " + textfmt.Dur(r.Latency)
	}
	if r.RetryOf.IsValid() {
		line += " (retry of id " + r.RetryOf.String() + ")"
	}
	if r.Err != nil {
		line += ": " + r.Err.Error()
	}
	return line
}

func idLabel(r *client.ReqInfo) string {
	if !r.ID.IsValid() {
		return "-"
	}
	return "id " + r.ID.String()
}

// taskLine renders a task event for --trace.
func taskLine(at string, ti *client.TaskInfo) string {
	line := fmt.Sprintf("%s task %s (tools/call %s id %s) %s", at, ti.Task.TaskID, ti.Tool, ti.Call, ti.Task.Status)
	if ti.Dir == client.In {
		line = fmt.Sprintf("%s task %s (sonde runs %s id %s for the server) %s", at, ti.Task.TaskID, ti.Method, ti.Call, ti.Task.Status)
	}
	if ti.Task.StatusMessage != "" {
		line += ": " + ti.Task.StatusMessage
	}
	if ti.End {
		line += " (end)"
	}
	if ti.Err != nil {
		line += ": " + ti.Err.Error()
	}
	return line
}

// printCountdown prints the budget left of the requests due at now.
func printCountdown(w io.Writer, inflight budgets, now, t0 time.Time, asJSON bool) {
	due, more := inflight.due(now)
	at := fmt.Sprintf("%9s", "+"+textfmt.Dur(now.Sub(t0)))
	for _, e := range due {
		if asJSON {
			fmt.Fprintln(w, countdownJSON(e, now))
		} else {
			fmt.Fprintln(w, countdownLine(at, e, now))
		}
	}
	if more > 0 && !asJSON {
		fmt.Fprintf(w, "%s     and %d more request(s) in flight\n", at, more)
	}
}
