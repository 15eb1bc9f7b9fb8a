// Package gate turns what sonde saw in sessions into a CI verdict: lint
// findings, requests that timed out or failed, tool results with isError,
// tool definitions that drifted from an accepted baseline, and the
// contracts of sonde check, as results; --fail-on chooses which of them
// fail the run; the results are written as JUnit XML (one testcase per rule
// per session) or SARIF 2.1.0 (rule ids, levels, the line of the frame in
// the capture as the location). docs/ci.md.
package gate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/lint"
)

// A Kind is what --fail-on selects.
type Kind string

// The kinds.
const (
	// Must and Should: lint findings of that level (docs/lint.md).
	Must   Kind = "must"
	Should Kind = "should"
	// Late, Unknown and Duplicate: responses with that frame verdict
	// (lint's late-response, unknown-id, duplicate-response).
	Late      Kind = "late"
	Unknown   Kind = "unknown"
	Duplicate Kind = "duplicate"
	// Timeout: a request of sonde's that timed out.
	Timeout Kind = "timeout"
	// Error: a request of sonde's answered with a JSON-RPC error (or ended
	// by a broken protocol, an exit or a failed HTTP exchange).
	Error Kind = "error"
	// ToolError: a tools/call whose result had isError.
	ToolError Kind = "tool-error"
	// Drift: a tool definition that differs from the accepted baseline.
	Drift Kind = "drift"
)

// Kinds lists every kind, in the order of --help.
var Kinds = []Kind{Must, Should, Late, Unknown, Duplicate, Timeout, Error, ToolError, Drift}

// FailOn is a set of kinds.
type FailOn map[Kind]bool

// ParseFailOn reads a comma-separated list of kinds ("none" for none, "all"
// for every kind). An unknown kind is an error naming the known ones.
func ParseFailOn(s string) (FailOn, error) {
	f := FailOn{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "" || p == "none":
		case p == "all":
			for _, k := range Kinds {
				f[k] = true
			}
		case slices.Contains(Kinds, Kind(p)):
			f[Kind(p)] = true
		default:
			return nil, fmt.Errorf("--fail-on: unknown kind %q (known: %s, all, none)", p, KindList())
		}
	}
	return f, nil
}

// KindList is the kinds joined by commas.
func KindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ",")
}

// String is the kinds in the order of Kinds, joined by commas ("none").
func (f FailOn) String() string {
	var names []string
	for _, k := range Kinds {
		if f[k] {
			names = append(names, string(k))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

// Gate rule names (beside lint's rules).
const (
	RuleTimeout   = "request-timeout"
	RuleError     = "request-error"
	RuleToolError = "tool-error"
	RuleDrift     = "tool-drift"
	// Contracts of sonde check (always failing when broken).
	RuleStep        = "check-step"
	RuleExpectTool  = "expect-tool"
	RuleForbidTool  = "forbid-tool"
	RuleMaxDuration = "max-duration"
	// RuleMaxServerDuration: a call's server time (an MRTR chain's rounds
	// summed, the client's waits left out) over --max-server-duration.
	RuleMaxServerDuration = "max-server-duration"
	RuleToolsCount        = "expect-tools-count"
)

// RuleInfo describes a rule of a report: a lint rule, a gate rule or a
// contract.
type RuleInfo struct {
	ID      string
	Summary string
	Help    string
	// Level is the SARIF level of its results: "error" or "warning".
	Level string
	// Kinds are what --fail-on names to make its results fail; a rule
	// without kinds (a contract) always fails.
	Kinds []Kind
}

// kindsOf is the kinds of a lint rule.
func kindsOf(r lint.Rule) []Kind {
	k := []Kind{Kind(r.Level)}
	switch r.Name {
	case lint.RuleLateResponse:
		k = append(k, Late)
	case lint.RuleUnknownID:
		k = append(k, Unknown)
	case lint.RuleDuplicateResponse:
		k = append(k, Duplicate)
	}
	return k
}

// LintRules are lint's rules as report rules.
func LintRules() []RuleInfo {
	var out []RuleInfo
	for _, r := range lint.Rules() {
		level := "error"
		if r.Level == lint.Should {
			level = "warning"
		}
		out = append(out, RuleInfo{ID: r.Name, Summary: r.Summary, Help: "spec: " + r.Spec + " (docs/lint.md)", Level: level, Kinds: kindsOf(r)})
	}
	return out
}

// GateRules are the rules over outcomes and drift.
func GateRules() []RuleInfo {
	return []RuleInfo{
		{ID: RuleTimeout, Summary: "a request of sonde's got no answer before its deadline", Help: "docs/ci.md; docs/errors.md MCP_TIMEOUT", Level: "warning", Kinds: []Kind{Timeout}},
		{ID: RuleError, Summary: "a request of sonde's was answered with a JSON-RPC error, or ended by a broken protocol, an exit or a failed HTTP exchange", Help: "docs/ci.md; docs/errors.md", Level: "warning", Kinds: []Kind{Error}},
		{ID: RuleToolError, Summary: "a tools/call result had isError: true", Help: "docs/ci.md", Level: "warning", Kinds: []Kind{ToolError}},
		{ID: RuleDrift, Summary: "a tool definition differs from the baseline accepted for this server (sonde baseline accept)", Help: "docs/ci.md#drift", Level: "error", Kinds: []Kind{Drift}},
	}
}

// ContractRules are sonde check's contracts.
func ContractRules() []RuleInfo {
	return []RuleInfo{
		{ID: RuleStep, Summary: "a step of sonde check failed (start and initialize, tools/list, ping)", Help: "sonde check --help", Level: "error"},
		{ID: RuleExpectTool, Summary: "a tool named by --expect-tool is not listed", Help: "sonde check --help", Level: "error"},
		{ID: RuleForbidTool, Summary: "a tool named by --forbid-tool is listed", Help: "sonde check --help", Level: "error"},
		{ID: RuleMaxDuration, Summary: "a request took longer than --max-duration", Help: "sonde check --help", Level: "error"},
		{ID: RuleMaxServerDuration, Summary: "a call's server time (an MRTR chain's rounds, without the client's waits) was over --max-server-duration", Help: "sonde check --help", Level: "error"},
		{ID: RuleToolsCount, Summary: "the number of tools listed is not --expect-tools-count", Help: "sonde check --help", Level: "error"},
	}
}

// Result is one thing a rule found.
type Result struct {
	Rule    string
	Message string
	// Seq is the event that shows it (0 for none); Line is its line in
	// the capture (0 when there is no capture).
	Seq  uint64
	Line int
	// Method and ID are the message's, when there is one.
	Method string
	ID     string
	// Time is when it happened (zero when unknown).
	Time time.Time
}

// SessionReport is the results of one session.
type SessionReport struct {
	// Name says which session ("session 1: fixture 1.0").
	Name     string
	Start    time.Time
	Duration time.Duration
	Results  []Result
	// Checked lists the rules this session was checked against, in
	// order: each is one JUnit testcase.
	Checked []RuleInfo
	// Skipped are rules that could not be checked, with why (drift without
	// a baseline).
	Skipped map[string]string
}

// Report is what a run found, session by session.
type Report struct {
	// Command is "sonde lint" or "sonde check".
	Command string
	// Artifact is the capture file the lines refer to ("" without one).
	Artifact string
	// Target names what was checked (the capture, or the server).
	Target   string
	Sessions []*SessionReport
	FailOn   FailOn
}

// Rule returns the rule named id among those checked.
func (s *SessionReport) Rule(id string) (RuleInfo, bool) {
	for _, r := range s.Checked {
		if r.ID == id {
			return r, true
		}
	}
	return RuleInfo{}, false
}

// Fails reports whether results of rule r fail the run under f.
func (f FailOn) Fails(r RuleInfo) bool {
	if len(r.Kinds) == 0 {
		return true
	}
	for _, k := range r.Kinds {
		if f[k] {
			return true
		}
	}
	return false
}

// Failures returns the results that fail the run, in order.
func (r *Report) Failures() []Result {
	var out []Result
	for _, s := range r.Sessions {
		for _, res := range s.Results {
			if ri, ok := s.Rule(res.Rule); ok && r.FailOn.Fails(ri) {
				out = append(out, res)
			}
		}
	}
	return out
}

// Failed reports whether any result fails the run.
func (r *Report) Failed() bool { return len(r.Failures()) > 0 }

// rules returns every rule checked in any session, in first-seen order.
func (r *Report) rules() []RuleInfo {
	var out []RuleInfo
	seen := map[string]bool{}
	for _, s := range r.Sessions {
		for _, ri := range s.Checked {
			if !seen[ri.ID] {
				seen[ri.ID] = true
				out = append(out, ri)
			}
		}
	}
	return out
}
