package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/stats"
)

// Caps of one capture tool's answer: what is beyond them is counted, not
// listed.
const (
	// maxFindings bounds the findings capture_lint lists.
	maxFindings = 200
	// maxFaultNotes bounds the notes of fault rules listed (as sonde lint).
	maxFaultNotes = 50
	// maxRows bounds the methods and tools of capture_stats and the
	// changes, calls and costs of capture_diff.
	maxRows = 500
	// findingPreview bounds the raw bytes shown for a finding (as sonde lint).
	findingPreview = 200
	// valuePreview bounds a value of capture_diff (a description, a schema).
	valuePreview = 2000
	// namePreview bounds a name (a method, a tool, a key) and
	// detailPreview a finding's detail: both may quote a server.
	namePreview   = 200
	detailPreview = 500
)

// Finding is one protocol violation of capture_lint: the fields of sonde
// lint --json's findings.
type Finding struct {
	Rule  string     `json:"rule"`
	Level lint.Level `json:"level"`
	// Seq is the event's number; T its time since the capture's start (ns).
	Seq uint64 `json:"seq"`
	T   int64  `json:"t"`
	// Line is the record's line in the capture file.
	Line int    `json:"line,omitempty"`
	Dir  string `json:"dir"`
	// ID is the message's id with its JSON type (3 or "3").
	ID     any    `json:"id,omitempty"`
	Method string `json:"method,omitempty"`
	// Size is the frame's length in bytes; Preview its start, escaped.
	Size    int    `json:"size"`
	Preview string `json:"preview"`
	Detail  string `json:"detail"`
}

// FaultNote is a note of a fault rule (sonde tap --fault) in the capture:
// what the host saw was changed on purpose.
type FaultNote struct {
	Seq  uint64 `json:"seq"`
	T    int64  `json:"t"`
	Note string `json:"note"`
}

// LintResult is capture_lint's structured answer: sonde lint --json's
// findings, counts and rules, capped at maxFindings findings listed.
type LintResult struct {
	Capture  string    `json:"capture"`
	Findings []Finding `json:"findings"`
	// Total counts every finding; Omitted those past the cap, not listed.
	Total   int `json:"total"`
	Omitted int `json:"omitted,omitempty"`
	// Counts is the findings per rule (every one, listed or not).
	Counts map[string]int `json:"counts"`
	// Rules explains each rule found: level, summary, spec reference.
	Rules []lint.Rule `json:"rules"`
	// Faults are the fault rules' notes (at most maxFaultNotes);
	// FaultsTotal counts them all.
	Faults      []FaultNote `json:"faults,omitempty"`
	FaultsTotal int         `json:"faults_total,omitempty"`
	Warnings    []string    `json:"warnings,omitempty"`
}

// Lint reports the protocol violations of the capture at path with
// lint's rules over every event, as sonde lint does.
func Lint(path string) (*LintResult, error) {
	out := &LintResult{Capture: textfmt.Escape(path), Findings: []Finding{}, Counts: map[string]int{}, Rules: []lint.Rule{}}
	l := lint.New()
	var start time.Time
	_, warnings, err := readCapture(path, func(h capture.Header) { start = h.Start }, func(ev client.Event, line int) {
		if ev.Kind == client.EvNote && ev.Fault != nil {
			out.FaultsTotal++
			if len(out.Faults) < maxFaultNotes {
				out.Faults = append(out.Faults, FaultNote{Seq: ev.Seq, T: int64(ev.Time.Sub(start)), Note: textfmt.Escape(ev.Note)})
			}
		}
		for _, f := range l.Check(ev) {
			out.Total++
			out.Counts[f.Rule]++
			if len(out.Findings) < maxFindings {
				out.Findings = append(out.Findings, finding(f, start, line))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out.Omitted = out.Total - len(out.Findings)
	for _, name := range slices.Sorted(maps.Keys(out.Counts)) {
		if r, ok := lint.Lookup(name); ok {
			out.Rules = append(out.Rules, r)
		}
	}
	out.Warnings = escapeAll(warnings)
	return out, nil
}

// finding is f as capture_lint lists it: its text escaped, its bytes
// previewed as sonde lint shows them.
func finding(f lint.Finding, start time.Time, line int) Finding {
	r, _ := lint.Lookup(f.Rule)
	out := Finding{
		Rule: f.Rule, Level: r.Level, Seq: f.Seq, T: int64(f.Time.Sub(start)), Line: line, Dir: f.Dir.String(),
		Method: clipName(f.Method), Size: len(f.Raw), Preview: textfmt.Preview(f.Raw, findingPreview), Detail: textfmt.Preview([]byte(f.Detail), detailPreview),
	}
	out.ID = idValue(f.ID)
	return out
}

// Summary is the short text beside the structured answer.
func (r *LintResult) Summary() string {
	if r.Total == 0 {
		return "no protocol violations in " + r.Capture
	}
	parts := make([]string, 0, len(r.Counts))
	for _, name := range slices.Sorted(maps.Keys(r.Counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", r.Counts[name], name))
	}
	s := fmt.Sprintf("%d %s in %s: %s", r.Total, countNoun(r.Total, "finding", "findings"), r.Capture, strings.Join(parts, ", "))
	if r.Omitted > 0 {
		s += fmt.Sprintf(" (the first %d listed)", len(r.Findings))
	}
	return s
}

// StatsResult is capture_stats's structured answer: sonde stats --json
// (durations in ns), methods and tools capped at maxRows each.
type StatsResult struct {
	Capture string `json:"capture"`
	stats.Report
	// Context is the context cost of each tool, largest definition first.
	Context []diff.ToolCost `json:"context_cost"`
	// Omitted counts the methods and tools past the cap, not listed.
	Omitted  int      `json:"omitted,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Stats summarises the capture at path as sonde stats does: per method
// counts, outcomes and latency, requests in flight, context cost.
func Stats(path string) (*StatsResult, error) {
	var c *stats.Collector
	defs := diff.NewToolCollector()
	_, warnings, err := readCapture(path, func(h capture.Header) { c = stats.New(h.Start) }, func(ev client.Event, _ int) {
		defs.Add(ev)
		c.Add(ev)
	})
	if err != nil {
		return nil, err
	}
	out := &StatsResult{Capture: textfmt.Escape(path), Report: c.Report(0), Warnings: escapeAll(warnings)}
	costs := diff.Costs(defs.Shown())
	diff.SortByDef(costs)
	if len(out.Methods) > maxRows {
		out.Omitted += len(out.Methods) - maxRows
		out.Methods = out.Methods[:maxRows]
	}
	if len(costs) > maxRows {
		out.Omitted += len(costs) - maxRows
		costs = costs[:maxRows]
	}
	for i := range out.Methods {
		m := &out.Methods[i]
		m.Method, m.Tool = clipName(m.Method), clipName(m.Tool)
	}
	for i := range costs {
		costs[i].Name = clipName(costs[i].Name)
	}
	out.Context = emptyIfNil(costs)
	return out, nil
}

// Summary is the short text beside the structured answer.
func (r *StatsResult) Summary() string {
	if r.Requests == 0 {
		return "no requests ended in " + r.Capture
	}
	errs := 0
	for _, m := range r.Methods {
		errs += m.Errors
	}
	s := fmt.Sprintf("%s: %d %s over %s, %d %s; at most %d in flight",
		r.Capture, r.Requests, countNoun(r.Requests, "request", "requests"), textfmt.Dur(r.Duration), errs, countNoun(errs, "error", "errors"), r.Concurrency.Max)
	if t := diff.TotalCost(r.Context); t.Def > 0 || t.Results > 0 {
		s += fmt.Sprintf("; context cost: tool definitions %d B, results %d B", t.Def, t.Results)
	}
	return s
}

// DiffResult is capture_diff's structured answer: sonde diff --json,
// each list capped at maxRows, values cut at valuePreview runes.
type DiffResult struct {
	A       string `json:"a"`
	B       string `json:"b"`
	Differs bool   `json:"differs"`
	*diff.Report
	// Omitted counts the changes, calls and costs past the cap.
	Omitted  int      `json:"omitted,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Diff compares the captures at pathA (the old) and pathB (the new) as
// sonde diff does, with its default thresholds.
func Diff(pathA, pathB string) (*DiffResult, error) {
	a, warnA, err := shown(pathA)
	if err != nil {
		return nil, err
	}
	b, warnB, err := shown(pathB)
	if err != nil {
		return nil, err
	}
	rep := diff.Compare(a, b, diff.DefaultThresholds)
	out := &DiffResult{A: textfmt.Escape(pathA), B: textfmt.Escape(pathB), Differs: rep.Differs(), Report: rep}
	for _, w := range warnA {
		out.Warnings = append(out.Warnings, "a: "+textfmt.Escape(w))
	}
	for _, w := range warnB {
		out.Warnings = append(out.Warnings, "b: "+textfmt.Escape(w))
	}
	out.Omitted = capSlice(&rep.Changes) + capSlice(&rep.Calls) + capSlice(&rep.Costs)
	for i := range rep.Changes {
		c := &rep.Changes[i]
		c.Key, c.Field, c.Note = clipName(c.Key), clipName(c.Field), textfmt.Preview([]byte(c.Note), detailPreview)
		c.Old, c.New = clipValue(c.Old), clipValue(c.New)
	}
	for i := range rep.Calls {
		c := &rep.Calls[i]
		c.Tool, c.Args = clipName(c.Tool), clipValue(c.Args)
	}
	for i := range rep.Costs {
		rep.Costs[i].Name = clipName(rep.Costs[i].Name)
	}
	return out, nil
}

// shown folds a whole capture into what its server showed.
func shown(path string) (*diff.Shown, []string, error) {
	c := diff.NewCollector()
	_, warnings, err := readCapture(path, nil, func(ev client.Event, _ int) { c.Add(ev) })
	return c.Shown(), warnings, err
}

// Summary is the short text beside the structured answer.
func (r *DiffResult) Summary() string {
	o, n := r.OldTotal, r.NewTotal
	cost := fmt.Sprintf("context cost: tool definitions %d B → %d B, results %d B → %d B", o.Def, n.Def, o.Results, n.Results)
	if !r.Differs {
		return "no differences between " + r.A + " and " + r.B + "; " + cost
	}
	s := fmt.Sprintf("%s → %s: %d %s, %d %s; %s", r.A, r.B, len(r.Changes), countNoun(len(r.Changes), "change", "changes"),
		len(r.Calls), countNoun(len(r.Calls), "call that changed", "calls that changed"), cost)
	if r.Omitted > 0 {
		s += fmt.Sprintf(" (%d more not listed)", r.Omitted)
	}
	return s
}

// capSlice cuts *s to maxRows and returns how many it dropped; an empty
// list stays an empty JSON array.
func capSlice[T any](s *[]T) int {
	if *s == nil {
		*s = []T{}
	}
	if n := len(*s); n > maxRows {
		*s = (*s)[:maxRows]
		return n - maxRows
	}
	return 0
}

// clipName is a name from a capture: escaped, at most namePreview runes.
func clipName(s string) string { return textfmt.Preview([]byte(s), namePreview) }

// clipValue is a value of a diff: escaped, at most valuePreview runes.
func clipValue(s string) string { return textfmt.Preview([]byte(s), valuePreview) }

func escapeAll(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = textfmt.Escape(s)
	}
	return out
}

func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// idValue is id as its JSON value (an int64 or an escaped string; nil
// for none), which an output schema of "any" accepts.
func idValue(id jsonrpc.ID) any {
	if n, ok := id.Int64(); ok {
		return n
	}
	if str, ok := id.Str(); ok {
		return textfmt.Escape(str)
	}
	return nil
}
