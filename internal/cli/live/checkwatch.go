package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/gate"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/stats"
)

// watchBuffer is the check's subscription buffer: a check's session is a
// handful of events, and the collector keeps up with a burst of noise.
const watchBuffer = 1 << 14

// checkWatch follows the check's client: it folds every event into the
// gate's collector (lint, outcomes, the tools listed), notes the requests
// over --max-duration, and keeps what explains a start that failed (lines
// on stdout that are not JSON-RPC, stderr, the exit).
type checkWatch struct {
	mu        sync.Mutex
	follows   []*client.Following // one per client followed
	col       *gate.Collector
	contracts *gate.Contracts
	slow      []gate.Result
	// times folds the MRTR chains (server time apart from the client's
	// waits) for --max-server-duration.
	times *stats.Collector

	noise     int    // lines on stdout that are not JSON-RPC
	firstLine []byte // the first of them
	stderr    int    // bytes on stderr
	exit      *client.Exit
	stdio     bool // the server runs on stdio (not over HTTP)
}

func newCheckWatch(target string, stdio bool, failOn gate.FailOn, c *gate.Contracts) *checkWatch {
	return &checkWatch{col: gate.NewCollector("sonde check", target, "", failOn), contracts: c, stdio: stdio, times: stats.New(time.Now())}
}

// follow subscribes to a client before it connects.
func (w *checkWatch) follow(c *client.Client) {
	f := client.FollowN(context.Background(), c, watchBuffer, w)
	w.mu.Lock()
	w.follows = append(w.follows, f)
	w.mu.Unlock()
}

// Apply folds one event of a followed client (client.Sink).
func (w *checkWatch) Apply(ev client.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.col.Add(ev, 0)
	if r, ok := w.contracts.Slow(ev, 0); ok {
		w.slow = append(w.slow, r)
	}
	if r, ok := w.contracts.SlowServer(ev, 0); ok {
		w.slow = append(w.slow, r)
	}
	w.times.Add(ev)
	switch {
	case ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Verdict == client.VerdictMalformed:
		if w.noise == 0 {
			w.firstLine = bytes.Clone(ev.Frame.Raw[:min(len(ev.Frame.Raw), 200)])
		}
		w.noise++
	case ev.Kind == client.EvStderr:
		w.stderr += len(ev.Stderr)
	case ev.Kind == client.EvProcess && ev.Proc != nil && ev.Proc.Exit != nil:
		w.exit = ev.Proc.Exit
	}
}

// wait waits until every followed client's events are folded (the
// clients are closed).
func (w *checkWatch) wait() {
	w.mu.Lock()
	fs := w.follows
	w.mu.Unlock()
	for _, f := range fs {
		f.Wait()
	}
}

// why explains a start or handshake that failed with err, from what the
// server did: for a server that could not start, that exited, or that did
// not answer in time ("" for the other failures, whose message says it
// all: a refused version, an HTTP status).
func (w *checkWatch) why(err error) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ce *client.Error
	if !errors.As(err, &ce) {
		return ""
	}
	exit := w.exit
	if exit == nil {
		exit = ce.Exit
	}
	var parts []string
	switch {
	case ce.Code == client.CodeSpawn:
		return "the server could not be started: " + ce.Message
	case ce.Code == client.CodeProcessExit && exit != nil && exit.Signal == "":
		parts = append(parts, "the server exited ("+exit.Status()+") before answering initialize")
	case ce.Code == client.CodeProcessExit:
		parts = append(parts, "the server ended before answering initialize")
	case ce.Code == client.CodeTimeout:
		parts = append(parts, "the server did not answer initialize in time (--timeout)")
	default:
		return ""
	}
	switch {
	case w.noise > 0:
		parts = append(parts, fmt.Sprintf("it wrote %d %s on stdout that %s not JSON-RPC (the first: %s)", w.noise, textfmt.Plural(w.noise, "line", "lines"), textfmt.Plural(w.noise, "is", "are"), textfmt.Preview(w.firstLine, 80)))
	case exit != nil || ce.Code == client.CodeTimeout:
		parts = append(parts, "it wrote nothing on stdout")
	}
	var tail []byte
	if exit != nil {
		tail = exit.Stderr
	}
	switch last := lastLine(tail); {
	case last != "":
		parts = append(parts, "its stderr ends with: "+textfmt.Preview([]byte(last), 120))
	case w.stderr == 0:
		parts = append(parts, "and nothing on stderr")
	}
	msg := strings.Join(parts, "; ")
	if w.noise == 0 && w.stdio {
		msg += ". An MCP server on stdio reads JSON-RPC on stdin and answers on stdout: is this the server's command (some need an argument such as \"stdio\" or \"mcp\")?"
	}
	return msg
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\r\n\t ")
	if i := strings.LastIndexAny(s, "\r\n"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// report ends the collection: the gate's report of the session with the
// failed steps, the contracts (tools listed: names, listed false when
// tools/list failed or never ran), drift, and the lines of the --record
// capture.
func (w *checkWatch) report(env *cmdutil.Env, o *CheckOptions, steps []checkStep, names []string, listed bool) (*gate.Report, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var missed uint64
	for _, f := range w.follows {
		missed += f.Missed()
	}
	if missed > 0 {
		fmt.Fprintf(env.Err, "sonde: warning: check missed %d events of the session: lint and the outcomes may be incomplete\n", missed)
	}
	if err := o.Gate.CheckDrift(w.col, o.Gate.FailOnSet()); err != nil {
		return nil, err
	}
	rep := w.col.Report()
	var stepResults []gate.Result
	for _, st := range steps {
		if !st.OK {
			msg := st.Name + ": " + st.Detail
			if st.Why != "" {
				msg += ": " + st.Why
			}
			stepResults = append(stepResults, gate.Result{Rule: gate.RuleStep, Message: msg})
		}
	}
	rep.AddChecked(gate.ContractRules()[:1], stepResults)
	results := append(w.slow, w.slowChains()...)
	results = append(results, w.contracts.Tools(names, listed)...)
	rep.AddChecked(w.contracts.Rules(), results)
	if o.Server.Record != "" {
		if err := rep.Locate(o.Server.Record); err != nil {
			fmt.Fprintf(env.Err, "sonde: warning: the lines of the results in %s: %v\n", o.Server.Record, err)
		}
	}
	return rep, nil
}

// slowChains holds the MRTR chains that ended to --max-server-duration.
func (w *checkWatch) slowChains() []gate.Result {
	if w.contracts.MaxServerDuration <= 0 {
		return nil
	}
	var out []gate.Result
	for _, ch := range w.times.Report(0).Chains {
		if r, ok := w.contracts.SlowChain(gate.Chain{Method: ch.Method, Tool: ch.Tool, Rounds: ch.Rounds, Server: ch.Server, Waiting: ch.Waiting, Outcome: ch.Outcome}); ok {
			out = append(out, r)
		}
	}
	return out
}

// contractDetail says what a contract that held asked for.
func contractDetail(c *gate.Contracts, rule string) string {
	switch rule {
	case gate.RuleExpectTool:
		return "listed: " + strings.Join(c.ExpectTools, ", ")
	case gate.RuleForbidTool:
		return "not listed: " + strings.Join(c.ForbidTools, ", ")
	case gate.RuleMaxDuration:
		return "every request within " + c.MaxDuration.String()
	case gate.RuleMaxServerDuration:
		return "every call's server time within " + c.MaxServerDuration.String() + " (MRTR chains: the rounds summed, the client's waits left out)"
	case gate.RuleToolsCount:
		return fmt.Sprintf("%d tools", c.ToolsCount)
	}
	return ""
}

func isContract(rule string) bool {
	return slices.ContainsFunc(gate.ContractRules(), func(r gate.RuleInfo) bool { return r.ID == rule })
}

// resultJSON is a failing result in check --json.
type resultJSON struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Seq     uint64 `json:"seq,omitempty"`
	Line    int    `json:"line,omitempty"`
	T       string `json:"time,omitempty"`
}

func resultsJSON(rs []gate.Result) []resultJSON {
	out := []resultJSON{}
	for _, r := range rs {
		rj := resultJSON{Rule: r.Rule, Message: r.Message, Seq: r.Seq, Line: r.Line}
		if !r.Time.IsZero() {
			rj.T = r.Time.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, rj)
	}
	return out
}
