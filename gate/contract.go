package gate

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
)

// Contracts are the promises sonde check holds a server to.
type Contracts struct {
	// ExpectTools must be listed; ForbidTools must not.
	ExpectTools, ForbidTools []string
	// MaxDuration bounds each request's time from queued to its outcome
	// (0: no bound).
	MaxDuration time.Duration
	// MaxServerDuration bounds each call's server time: a request's
	// latency, or the sum of an MRTR chain's rounds, without the time the
	// client (often its user) took between them (0: no bound).
	MaxServerDuration time.Duration
	// ToolsCount is how many tools must be listed (negative: any).
	ToolsCount int
}

// Rules returns the contract rules c sets.
func (c *Contracts) Rules() []RuleInfo {
	all := ContractRules()
	var out []RuleInfo
	for _, r := range all[1:] {
		switch {
		case r.ID == RuleExpectTool && len(c.ExpectTools) > 0,
			r.ID == RuleForbidTool && len(c.ForbidTools) > 0,
			r.ID == RuleMaxDuration && c.MaxDuration > 0,
			r.ID == RuleMaxServerDuration && c.MaxServerDuration > 0,
			r.ID == RuleToolsCount && c.ToolsCount >= 0:
			out = append(out, r)
		}
	}
	return out
}

// Slow returns a result when ev is the outcome of a request of sonde's
// that took longer than MaxDuration (line: its line, 0 for none).
func (c *Contracts) Slow(ev client.Event, line int) (Result, bool) {
	r := ev.Req
	if c.MaxDuration <= 0 || ev.Kind != client.EvRequest || r == nil || r.Dir != client.Out || !r.State.Final() || r.Latency <= c.MaxDuration {
		return Result{}, false
	}
	what := r.Method
	if r.Tool != "" {
		what += " " + r.Tool
	}
	return Result{Rule: RuleMaxDuration, Message: fmt.Sprintf("%s id %s took %s (%s), over --max-duration %s", what, r.ID.String(), r.Latency.Round(time.Millisecond), r.State, c.MaxDuration),
		Seq: ev.Seq, Line: line, Method: r.Method, ID: r.ID.String(), Time: ev.Time}, true
}

// SlowServer returns a result when ev is the outcome of a request of
// sonde's outside an MRTR chain (not answered input_required, not a retry)
// whose server time, its latency, is over MaxServerDuration. A chain is
// held to it by SlowChain.
func (c *Contracts) SlowServer(ev client.Event, line int) (Result, bool) {
	r := ev.Req
	if c.MaxServerDuration <= 0 || ev.Kind != client.EvRequest || r == nil || r.Dir != client.Out || !r.State.Final() ||
		r.State == client.StateRetried || r.RetryOf.IsValid() || r.Latency <= c.MaxServerDuration {
		return Result{}, false
	}
	return Result{Rule: RuleMaxServerDuration, Message: fmt.Sprintf("%s id %s: the server took %s (%s), over --max-server-duration %s", callName(r.Method, r.Tool), r.ID.String(), r.Latency.Round(time.Millisecond), r.State, c.MaxServerDuration),
		Seq: ev.Seq, Line: line, Method: r.Method, ID: r.ID.String(), Time: ev.Time}, true
}

// Chain is an MRTR chain's time, as stats folds it: Server the sum of its
// rounds' latencies, Waiting the time between an input_required answer and
// the next round (the client's, often its user's).
type Chain struct {
	Method, Tool string
	Rounds       int
	Server       time.Duration
	Waiting      time.Duration
	Outcome      string
}

// SlowChain returns a result when an MRTR chain's server time is over
// MaxServerDuration; the time spent waiting on the client does not count.
func (c *Contracts) SlowChain(ch Chain) (Result, bool) {
	if c.MaxServerDuration <= 0 || ch.Server <= c.MaxServerDuration {
		return Result{}, false
	}
	return Result{Rule: RuleMaxServerDuration, Message: fmt.Sprintf("%s (MRTR chain, %d rounds, %s): the server worked %s while the client and its user took %s, over --max-server-duration %s",
		callName(ch.Method, ch.Tool), ch.Rounds, ch.Outcome, ch.Server.Round(time.Millisecond), ch.Waiting.Round(time.Millisecond), c.MaxServerDuration), Method: ch.Method}, true
}

func callName(method, tool string) string {
	if tool != "" {
		return method + " " + tool
	}
	return method
}

// Tools returns the results of the contracts on the tools listed (names;
// listed false when tools/list failed, and every tool contract fails).
func (c *Contracts) Tools(names []string, listed bool) []Result {
	var out []Result
	if !listed {
		for _, r := range c.Rules() {
			if r.ID != RuleMaxDuration && r.ID != RuleMaxServerDuration {
				out = append(out, Result{Rule: r.ID, Message: "tools/list failed: the tools could not be checked"})
			}
		}
		return out
	}
	for _, n := range c.ExpectTools {
		if !slices.Contains(names, n) {
			out = append(out, Result{Rule: RuleExpectTool, Message: fmt.Sprintf("tool %q is not listed (--expect-tool)", n), Method: "tools/list"})
		}
	}
	for _, n := range c.ForbidTools {
		if slices.Contains(names, n) {
			out = append(out, Result{Rule: RuleForbidTool, Message: fmt.Sprintf("tool %q is listed (--forbid-tool)", n), Method: "tools/list"})
		}
	}
	if c.ToolsCount >= 0 && len(names) != c.ToolsCount {
		out = append(out, Result{Rule: RuleToolsCount, Message: fmt.Sprintf("%d tools listed, --expect-tools-count %d", len(names), c.ToolsCount), Method: "tools/list"})
	}
	return out
}

// AddChecked adds rules and their results to the last session (a session
// is made when there is none: a server that never started).
func (r *Report) AddChecked(rules []RuleInfo, results []Result) {
	if len(r.Sessions) == 0 {
		r.Sessions = append(r.Sessions, &SessionReport{Name: "session 1"})
	}
	s := r.Sessions[len(r.Sessions)-1]
	s.Checked = append(slices.Clone(s.Checked), rules...)
	s.Results = append(s.Results, results...)
}

// Locate sets the line of each result from the capture at path, written
// while the results were collected (sonde check --record): the records of
// the report's n-th session are the n-th run of increasing Seq in the
// file. It makes path the report's Artifact.
func (r *Report) Locate(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		return err
	}
	want := make([]map[uint64][]*Result, len(r.Sessions))
	for i, s := range r.Sessions {
		want[i] = map[uint64][]*Result{}
		for j := range s.Results {
			if res := &s.Results[j]; res.Seq > 0 {
				want[i][res.Seq] = append(want[i][res.Seq], res)
			}
		}
	}
	session, last := 0, uint64(0)
	for rec, err := range rd.All() {
		if err != nil {
			return err
		}
		if rec.Seq == 0 {
			continue
		}
		if rec.Seq <= last {
			session++
		}
		last = rec.Seq
		if session >= len(want) {
			break
		}
		for _, res := range want[session][rec.Seq] {
			res.Line = rec.Line
		}
	}
	r.Artifact = path
	return nil
}
