package capfile

import (
	"bufio"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/gate"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/lint"
)

// previewRunes bounds the raw bytes shown for a finding.
const previewRunes = 200

// LintOptions are the flags of `sonde lint`.
type LintOptions struct {
	JSON   bool
	Rules  bool // list the rules instead of linting a file
	Gate   cmdutil.GateFlags
	Filter string // --filter: the findings listed (the rules see every event)
}

// NewCmdLint is `sonde lint FILE`.
func NewCmdLint(env *cmdutil.Env) *cobra.Command {
	var o LintOptions
	cmd := &cobra.Command{
		Use:   "lint FILE|SESSION | --rules",
		Short: "Report the protocol violations in a capture",
		Long: `Read a capture (--record FILE) and report every protocol violation it shows, each with the
frame that shows it: its event number, time, direction, id and the start of its raw bytes,
the rule's stable name and the spec reference. The rules are in docs/lint.md.

  sonde lint bug.jsonl
  sonde lint --json bug.jsonl
  sonde lint --rules           every rule: name, level, explanation, spec reference
  sonde lint --format sarif --fail-on must,timeout,drift bug.jsonl > lint.sarif

` + cmdutil.FailOnHelp + `
The default --fail-on is must,should: every finding fails. In text and JSON output the
results of the other gates (timeout, error, tool-error, drift) are listed when --fail-on
names them.

Exit status: 0 nothing that --fail-on names was found, 1 something was, 2 the file cannot
be read as a capture (or a bad flag).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Rules && len(args) == 0 {
				return nil
			}
			if len(args) != 1 || o.Rules {
				return cmdutil.Usagef("lint takes one capture FILE, or --rules alone (see sonde lint --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Rules {
				writeRules(env, o.JSON)
				return nil
			}
			return runLint(env, &o, args[0])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output (--format json)")
	cmd.Flags().BoolVar(&o.Rules, "rules", false, "list the rules instead of linting a file")
	o.Gate.Register(cmd.Flags(), "must,should")
	addFilterFlag(cmd, &o.Filter)
	return cmd
}

// runLint reports the violations in the capture at path.
func runLint(env *cmdutil.Env, o *LintOptions, arg string) error {
	path, err := cmdutil.CaptureArg(arg)
	if err != nil {
		return err
	}
	keep, err := eventFilter(path, o.Filter)
	if err != nil {
		return err
	}
	failOn, err := o.Gate.Parse(o.JSON)
	if err != nil {
		return err
	}
	g := gate.NewCollector("sonde lint", path, path, failOn)
	var found []lint.Finding
	var faults faultNotes
	prog := newProgress(env, path, o.Gate.Format == cmdutil.FormatJSON)
	h, warnings, err := eachEventAt(path, nil, func(ev client.Event, line int) {
		prog.tick()
		fs := g.Add(ev, line) // every event: the rules need the whole session
		if !keep(ev) {
			fs = nil
		}
		faults.see(ev, fs)
		found = append(found, fs...)
	})
	prog.done()
	if err != nil {
		return err
	}
	if err := o.Gate.CheckDrift(g, failOn); err != nil {
		return err
	}
	rep := g.Report()
	gates := gateResults(rep)
	switch o.Gate.Format {
	case cmdutil.FormatJSON:
		out := lintJSON(path, h.Start, found, warnings)
		out.FailOn, out.Gates = failOn.String(), gates
		cmdutil.WriteJSON(env.Out, out)
	case cmdutil.FormatJUnit, cmdutil.FormatSARIF:
		warnCapture(env, path, warnings)
		if err := o.Gate.WriteMachine(env, rep); err != nil {
			return err
		}
	default:
		warnCapture(env, path, warnings)
		faults.write(env, h.Start)
		writeLint(env, h.Start, found, faults.after)
		writeGates(env, gates)
	}
	// With --filter, only the findings listed can fail the run.
	if rep.Failed() && (o.Filter == "" || len(found) > 0) {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError}
	}
	return nil
}

// gateResult is a result of a gate other than lint's rules, in lint's text
// and JSON output.
type gateResult struct {
	Rule    string `json:"rule"`
	Session int    `json:"session"`
	Line    int    `json:"line,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	Message string `json:"message"`
}

// gateResults are the failing results of the report that are not lint
// findings (which lint lists on its own).
func gateResults(rep *gate.Report) []gateResult {
	lintRule := func(name string) bool { _, ok := lint.Lookup(name); return ok }
	out := []gateResult{}
	for i, s := range rep.Sessions {
		for _, r := range s.Results {
			ri, _ := s.Rule(r.Rule)
			if lintRule(r.Rule) || !rep.FailOn.Fails(ri) {
				continue
			}
			out = append(out, gateResult{Rule: r.Rule, Session: i + 1, Line: r.Line, Seq: r.Seq, Message: r.Message})
		}
		for _, rule := range slices.Sorted(maps.Keys(s.Skipped)) {
			out = append(out, gateResult{Rule: rule, Session: i + 1, Message: "not checked: " + s.Skipped[rule]})
		}
	}
	return out
}

// writeGates lists the results of the other gates.
func writeGates(env *cmdutil.Env, gates []gateResult) {
	if len(gates) == 0 {
		return
	}
	fmt.Fprintf(env.Out, "\n%d %s of --fail-on:\n", len(gates), textfmt.Plural(len(gates), "result", "results"))
	for _, g := range gates {
		where := fmt.Sprintf("session %d", g.Session)
		if g.Line > 0 {
			where += fmt.Sprintf(", line %d", g.Line)
		}
		fmt.Fprintf(env.Out, "  %s  %s  %s\n", g.Rule, where, textfmt.Escape(g.Message))
	}
}

// writeRules lists every rule.
func writeRules(env *cmdutil.Env, asJSON bool) {
	if asJSON {
		cmdutil.WriteJSON(env.Out, lint.Rules())
		return
	}
	for _, r := range lint.Rules() {
		fmt.Fprintf(env.Out, "%s (%s): %s\n  spec: %s\n", r.Name, r.Level, r.Summary, r.Spec)
	}
}

// lintCounts returns the rules found in order of first appearance and how
// many times each was.
func lintCounts(found []lint.Finding) ([]string, map[string]int) {
	var order []string
	counts := map[string]int{}
	for _, f := range found {
		if counts[f.Rule] == 0 {
			order = append(order, f.Rule)
		}
		counts[f.Rule]++
	}
	return order, counts
}

// faultNotes are the notes of sonde tap --fault in a capture: each time a
// rule fired ("fault rule N (RULE) dropped …"), and, by the frame event
// that shows a finding, the notes just before it (the change a rule made
// that the finding is about).
type faultNotes struct {
	all     []client.Event
	pending []string
	framed  bool // a frame came after the pending notes
	grace   int  // clean frames the pending notes outlive (a duplicate's first copy)
	after   map[uint64][]string
}

// maxFaultNotes bounds the notes listed before the findings.
const maxFaultNotes = 50

func (fn *faultNotes) see(ev client.Event, found []lint.Finding) {
	switch {
	case ev.Kind == client.EvNote && ev.Fault != nil:
		fn.all = append(fn.all, ev)
		if fn.framed { // a new change: the last one's frames are shown
			fn.pending, fn.framed, fn.grace = nil, false, 0
		}
		fn.pending = append(fn.pending, ev.Note)
		if ev.Fault.Action == client.FaultDuplicate {
			fn.grace = 1
		}
	case ev.Kind == client.EvFrame && len(fn.pending) > 0:
		if len(found) == 0 {
			// A frame nothing is wrong with: the rule's change is
			// behind it (unless it is the first of duplicates).
			if fn.grace > 0 {
				fn.grace--
				return
			}
			fn.pending = nil
			return
		}
		fn.framed = true
		if fn.after == nil {
			fn.after = map[uint64][]string{}
		}
		fn.after[ev.Seq] = fn.pending
	}
}

// write lists the notes of the rules that fired, when there are any.
func (fn *faultNotes) write(env *cmdutil.Env, start time.Time) {
	if len(fn.all) == 0 {
		return
	}
	fmt.Fprintf(env.Out, "fault rules (sonde tap --fault) changed this session %d %s; the findings are about what the host saw:\n", len(fn.all), textfmt.Plural(len(fn.all), "time", "times"))
	for i, ev := range fn.all {
		if i == maxFaultNotes {
			fmt.Fprintf(env.Out, "  … and %d more\n", len(fn.all)-i)
			break
		}
		fmt.Fprintf(env.Out, "  +%s  event %d  %s\n", textfmt.Dur(ev.Time.Sub(start)), ev.Seq, textfmt.Escape(ev.Note))
	}
	fmt.Fprintln(env.Out)
}

func writeLint(env *cmdutil.Env, start time.Time, found []lint.Finding, injected map[uint64][]string) {
	if len(found) == 0 {
		fmt.Fprintln(env.Out, "no protocol violations")
		return
	}
	// A long capture can have hundreds of thousands of findings: one
	// write per line was a tenth of lint's time.
	out := bufio.NewWriterSize(env.Out, 64<<10)
	defer out.Flush()
	for _, f := range found {
		fmt.Fprintf(out, "+%s  event %d  %s", textfmt.Dur(f.Time.Sub(start)), f.Seq, f.Dir.Arrow())
		if f.ID.IsValid() {
			fmt.Fprintf(out, "  id %s", textfmt.Escape(f.ID.String()))
		}
		if f.Method != "" {
			fmt.Fprintf(out, "  %s", textfmt.Escape(f.Method))
		}
		fmt.Fprintf(out, "  %s\n  %s\n  %s\n", f.Rule, textfmt.Escape(f.Detail), textfmt.Preview(f.Raw, previewRunes))
		for _, n := range injected[f.Seq] {
			fmt.Fprintf(out, "  injected: %s\n", textfmt.Escape(n))
		}
		fmt.Fprintln(out)
	}
	order, counts := lintCounts(found)
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	fmt.Fprintf(out, "%d %s: %s\n", len(found), textfmt.Plural(len(found), "finding", "findings"), strings.Join(parts, ", "))
	for _, name := range order {
		r, _ := lint.Lookup(name)
		fmt.Fprintf(out, "\n%s (%s): %s\n  spec: %s\n", r.Name, r.Level, r.Summary, r.Spec)
	}
}

// findingJSON is one finding in lint --json.
type findingJSON struct {
	Rule    string      `json:"rule"`
	Level   lint.Level  `json:"level"`
	Seq     uint64      `json:"seq"`
	T       int64       `json:"t"`
	Dir     string      `json:"dir"`
	ID      *jsonrpc.ID `json:"id,omitempty"`
	Method  string      `json:"method,omitempty"`
	Size    int         `json:"size"`
	Preview string      `json:"preview"`
	Detail  string      `json:"detail"`
}

type lintReport struct {
	File     string         `json:"file"`
	FailOn   string         `json:"fail_on"`
	Gates    []gateResult   `json:"gates"`
	Findings []findingJSON  `json:"findings"`
	Counts   map[string]int `json:"counts"`
	Rules    []lint.Rule    `json:"rules"`
	Warnings []string       `json:"warnings,omitempty"`
}

func lintJSON(path string, start time.Time, found []lint.Finding, warnings []string) lintReport {
	rep := lintReport{File: path, Findings: []findingJSON{}, Rules: []lint.Rule{}, Warnings: warnings}
	order, counts := lintCounts(found)
	rep.Counts = counts
	for _, f := range found {
		r, _ := lint.Lookup(f.Rule)
		fj := findingJSON{
			Rule: f.Rule, Level: r.Level, Seq: f.Seq, T: int64(f.Time.Sub(start)), Dir: f.Dir.String(),
			Method: f.Method, Size: len(f.Raw), Preview: textfmt.Preview(f.Raw, previewRunes), Detail: f.Detail,
		}
		if f.ID.IsValid() {
			id := f.ID
			fj.ID = &id
		}
		rep.Findings = append(rep.Findings, fj)
	}
	slices.Sort(order)
	for _, name := range order {
		r, _ := lint.Lookup(name)
		rep.Rules = append(rep.Rules, r)
	}
	return rep
}
