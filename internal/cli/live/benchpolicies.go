package live

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/timeouts"
)

// maxPolicyEvents bounds the events bench --policies buffers while the
// calls run; past it they are missed (and the report says how many).
const maxPolicyEvents = 1 << 20

// BenchTimeouts is the --policies part of the bench report: the calls
// under client timeout policies (docs/timeouts.md), the summary only.
type BenchTimeouts struct {
	Summary []timeouts.Summary `json:"summary"`
	// Missed counts the client events the evaluation did not see (its
	// buffer was full): the summary then leaves calls out.
	Missed uint64 `json:"missed_events"`
}

// parsePolicies reads the --policies flags, one policy each: a preset or
// a spec.
func parsePolicies(list []string) ([]timeouts.Policy, error) {
	var ps []timeouts.Policy
	for _, s := range list {
		p, err := timeouts.ParsePolicy(s)
		if err != nil {
			return nil, cmdutil.Usagef("--policies: " + strings.TrimPrefix(err.Error(), timeouts.ErrPolicy.Error()+" "))
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// policyWatch folds the client's events into a timeouts collector while
// the calls run.
type policyWatch struct {
	sub  *client.Subscription
	col  *timeouts.Collector
	done chan struct{}
}

func watchPolicies(c *client.Client, ps []timeouts.Policy, calls int) *policyWatch {
	w := &policyWatch{sub: c.Subscribe(min(8*calls+64, maxPolicyEvents)), col: timeouts.NewCollector(time.Time{}, ps), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ev := range w.sub.C {
			w.col.Add(ev)
		}
	}()
	return w
}

// finish stops watching and returns the evaluation.
func (w *policyWatch) finish() *BenchTimeouts {
	rep := w.report()
	return &BenchTimeouts{Summary: rep.Summary, Missed: w.sub.Missed()}
}

// report stops watching and returns the whole report.
func (w *policyWatch) report() timeouts.Report {
	w.sub.Close()
	<-w.done
	return w.col.Finish()
}

// writeVerdicts stops watching and writes each request's verdicts (sonde
// call --policies: the call's).
func (w *policyWatch) writeVerdicts(out io.Writer) {
	rep := w.report()
	fmt.Fprintln(out, "sonde: under client timeout policies (sonde timeouts):")
	_ = rep.WriteText(out, true)
}

// writeBenchTimeouts is the text of the --policies evaluation.
func writeBenchTimeouts(out io.Writer, t *BenchTimeouts) {
	fmt.Fprintln(out, "  under client timeout policies (sonde timeouts):")
	var b strings.Builder
	_ = timeouts.Report{Summary: t.Summary}.WriteSummary(&b)
	text, _, _ := strings.Cut(b.String(), "\n\n") // the table, without the count line
	for line := range strings.SplitSeq(text, "\n") {
		fmt.Fprintln(out, "    "+line)
	}
	if t.Missed > 0 {
		fmt.Fprintf(out, "    (%d events missed: calls left out)\n", t.Missed)
	}
}
