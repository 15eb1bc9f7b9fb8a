package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/lint"
)

// maxResults bounds the results kept per rule per session; the rest are
// counted in the last one kept.
const maxResults = 1000

// Collector folds a client event stream into a Report: a SessionReport for each
// session the stream holds, with lint's findings, the requests that timed
// out or failed, the tool errors, and what diff.Collector saw (for drift).
// Use NewCollector; it is not safe for concurrent use.
type Collector struct {
	rep    *Report
	rules  []RuleInfo
	linter *lint.Linter
	cur    *SessionReport
	defs   *diff.Collector
	last   client.Event
	counts map[string]int // results per rule in the current session
	// views are the definitions seen in each session, parallel to
	// rep.Sessions.
	views     []*diff.Shown
	toolsLine []int // line of the frame of each session's tool listing
	// answers are the lines of the answer frames of the current session
	// not yet matched to their outcome (at most maxAnswers).
	answers map[uint64]int
}

// maxAnswers bounds Collector.answers.
const maxAnswers = 4096

// NewCollector returns a collector for a report of command (sonde lint,
// sonde check) over target, whose lines refer to artifact (the capture
// file; "" for none).
func NewCollector(command, target, artifact string, failOn FailOn) *Collector {
	return &Collector{
		rep:    &Report{Command: command, Target: target, Artifact: artifact, FailOn: failOn},
		rules:  append(LintRules(), GateRules()[:3]...),
		linter: lint.New(),
	}
}

// Add folds one event; line is its line in the capture (0 for none). It
// returns lint's findings for the event (the linter's slice, reused by the
// next call: copy what you keep).
func (c *Collector) Add(ev client.Event, line int) []lint.Finding {
	// A session begins at a process start or connect, or at the first event
	// of a new client (Seq 1, as after a restart in a capture).
	if c.cur == nil || (ev.StartsSession() || ev.Seq == 1) && c.started() {
		c.begin(ev)
	}
	c.last = ev
	found := c.linter.Check(ev)
	for _, f := range found {
		c.add(Result{Rule: f.Rule, Message: f.Detail, Seq: f.Seq, Line: line, Method: f.Method, ID: idText(f.ID.IsValid(), f.ID.String()), Time: f.Time})
	}
	tools := len(c.defs.Shown().Tools)
	var first uint64
	if tools > 0 {
		first = c.defs.Shown().Tools[0].Seq
	}
	if ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Dir == client.In && ev.Frame.Verdict == client.VerdictResolved {
		if len(c.answers) >= maxAnswers {
			clear(c.answers)
		}
		c.answers[ev.Seq] = line
	}
	done := c.defs.Add(ev)
	if s := c.defs.Shown(); len(s.Tools) > 0 && (len(s.Tools) != tools || s.Tools[0].Seq != first) {
		c.toolsLine[len(c.toolsLine)-1] = line
	}
	if done != nil {
		at := c.answers[done.FrameSeq]
		delete(c.answers, done.FrameSeq)
		if done.ToolError {
			c.add(Result{Rule: RuleToolError, Message: fmt.Sprintf("tools/call %s returned isError: true", done.Tool), Seq: done.FrameSeq, Line: at, Method: "tools/call", Time: ev.Time})
		}
	}
	if ev.Kind == client.EvRequest && ev.Req != nil && ev.Req.Dir == client.Out {
		c.outcome(ev, line)
	}
	return found
}

// started reports whether the current session has seen anything but its
// start.
func (c *Collector) started() bool { return c.last.Seq != 0 }

func (c *Collector) begin(ev client.Event) {
	c.cur = &SessionReport{Name: fmt.Sprintf("session %d", len(c.rep.Sessions)+1), Start: ev.Time, Checked: c.rules}
	c.rep.Sessions = append(c.rep.Sessions, c.cur)
	c.defs = diff.NewToolCollector()
	c.views = append(c.views, c.defs.Shown())
	c.toolsLine = append(c.toolsLine, 0)
	c.counts = map[string]int{}
	c.answers = map[uint64]int{}
	c.last = client.Event{}
}

func idText(ok bool, s string) string {
	if !ok {
		return ""
	}
	return s
}

func (c *Collector) outcome(ev client.Event, line int) {
	r := ev.Req
	var rule, what string
	switch r.State {
	case client.StateTimeout:
		rule, what = RuleTimeout, "timed out"
	case client.StateError, client.StateProtocol, client.StateExited, client.StateHTTP:
		rule, what = RuleError, "failed"
	default:
		return
	}
	msg := fmt.Sprintf("%s id %s %s after %s", r.Method, r.ID.String(), what, r.Latency.Round(1e6))
	if r.Tool != "" {
		msg = fmt.Sprintf("%s %s id %s %s after %s", r.Method, r.Tool, r.ID.String(), what, r.Latency.Round(1e6))
	}
	if r.Err != nil {
		var ce *client.Error
		if errors.As(r.Err, &ce) {
			msg += ": " + string(ce.Code) + ": " + ce.Message
		} else {
			msg += ": " + r.Err.Error()
		}
	}
	c.add(Result{Rule: rule, Message: msg, Seq: ev.Seq, Line: line, Method: r.Method, ID: r.ID.String(), Time: ev.Time})
}

func (c *Collector) add(r Result) {
	n := c.counts[r.Rule]
	c.counts[r.Rule] = n + 1
	switch {
	case n < maxResults:
		c.cur.Results = append(c.cur.Results, r)
	case n == maxResults:
		r.Message = "… and more results of this rule (only the first " + fmt.Sprint(maxResults) + " are listed)"
		c.cur.Results = append(c.cur.Results, r)
	}
}

// Report ends the collection: it names each session after its server and
// sets its duration, and returns the report.
func (c *Collector) Report() *Report {
	for i, s := range c.rep.Sessions {
		v := c.views[i]
		if name := strings.TrimSpace(v.Server.Name + " " + v.Server.Version); name != "" {
			s.Name += ": " + name
		}
		if i+1 < len(c.rep.Sessions) {
			s.Duration = c.rep.Sessions[i+1].Start.Sub(s.Start)
		} else if !c.last.Time.IsZero() {
			s.Duration = c.last.Time.Sub(s.Start)
		}
	}
	return c.rep
}

// Views returns what each session showed (its server, tools, calls),
// parallel to the report's sessions.
func (c *Collector) Views() []*diff.Shown { return c.views }
