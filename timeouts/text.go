package timeouts

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// WriteText writes the report for a terminal: each request that some
// policy did not pass (or that had a progress gap over a timeout; every
// request with all), then the summary table, policies × (failed, late,
// worst margin).
func (r Report) WriteText(w io.Writer, all bool) error {
	var b strings.Builder
	nameW := len("policy")
	for _, s := range r.Summary {
		nameW = max(nameW, utf8.RuneCountInString(textfmt.Escape(s.Policy.Name)))
	}
	shown := 0
	for _, row := range r.Rows {
		if !all && !row.notable() {
			continue
		}
		shown++
		row.write(&b, r.Summary, nameW)
	}
	if quiet := len(r.Rows) - shown; quiet > 0 {
		fmt.Fprintf(&b, "%d %s passed under every policy without a long progress gap (--all shows them)\n", quiet, textfmt.Plural(quiet, "request", "requests"))
	}
	if shown > 0 || len(r.Rows) > shown {
		b.WriteString("\n")
	}
	r.writeSummary(&b, nameW)
	_, err := io.WriteString(w, b.String())
	return err
}

func (row Row) notable() bool {
	for _, v := range row.Verdicts {
		if v.Result != ResultPass || v.Gaps > 0 {
			return true
		}
	}
	return false
}

func (row Row) write(b *strings.Builder, sums []Summary, nameW int) {
	name := textfmt.Escape(row.Method)
	if row.Tool != "" {
		name += " " + textfmt.Escape(row.Tool)
	}
	fmt.Fprintf(b, "id %s %s, sent at %s: ", textfmt.Escape(row.ID.String()), name, textfmt.Dur(row.At))
	if row.Latency >= 0 {
		fmt.Fprintf(b, "answered after %s", textfmt.Dur(row.Latency))
	} else {
		fmt.Fprintf(b, "no answer (%s after %s)", row.Outcome, textfmt.Dur(row.Ended.Sub(row.Sent)))
	}
	if row.Progress > 0 {
		fmt.Fprintf(b, ", %d progress", row.Progress)
	}
	b.WriteString("\n")
	for i, v := range row.Verdicts {
		pn := textfmt.Escape(sums[i].Policy.Name)
		fmt.Fprintf(b, "  %s%s  %s\n", pn, strings.Repeat(" ", nameW-utf8.RuneCountInString(pn)), v.text(row))
	}
}

// text is the verdict in words.
func (v Verdict) text(row Row) string {
	var s string
	switch v.Result {
	case ResultPass:
		s = "pass"
		if v.Margin != nil {
			s += ", margin " + textfmt.Dur(*v.Margin)
		} else {
			s += " (no deadline)"
		}
	case ResultFail:
		s = fmt.Sprintf("fail at %s (%s)", textfmt.Dur(v.At), v.Reason)
		if v.Late {
			s += fmt.Sprintf(", missed by %s: its answer would have been thrown away as late", textfmt.Dur(-*v.Margin))
		}
	case ResultUnknown:
		s = fmt.Sprintf("unknown: no answer, and it ended (%s) before this deadline", row.Outcome)
	}
	if v.Gaps > 0 {
		s += fmt.Sprintf("; %d progress %s over the timeout, the longest %s from %s", v.Gaps, textfmt.Plural(v.Gaps, "gap", "gaps"), textfmt.Dur(v.LongestGap), textfmt.Dur(v.GapAt))
	}
	return s
}

// WriteSummary writes the summary table alone (no per-request rows).
func (r Report) WriteSummary(w io.Writer) error {
	nameW := len("policy")
	for _, s := range r.Summary {
		nameW = max(nameW, utf8.RuneCountInString(textfmt.Escape(s.Policy.Name)))
	}
	var b strings.Builder
	r.writeSummary(&b, nameW)
	_, err := io.WriteString(w, b.String())
	return err
}

func (r Report) writeSummary(b *strings.Builder, nameW int) {
	spec := func(p Policy) string {
		if p.Name == p.Spec() {
			return "" // a spec given as it is: its name says it
		}
		return p.Spec()
	}
	specW := len("limits")
	for _, s := range r.Summary {
		specW = max(specW, len(spec(s.Policy)))
	}
	line := func(name, spec string, cells ...string) {
		fmt.Fprintf(b, "%s%s  %-*s", name, strings.Repeat(" ", nameW-utf8.RuneCountInString(name)), specW, spec)
		for i, c := range cells {
			width := 8
			if i == len(cells)-1 {
				width = 12
			}
			fmt.Fprintf(b, "  %*s", width, c)
		}
		b.WriteString("\n")
	}
	line("policy", "limits", "requests", "failed", "late", "unknown", "gaps", "worst margin")
	for _, s := range r.Summary {
		worst := "-"
		if s.WorstMargin != nil {
			worst = textfmt.Dur(*s.WorstMargin) + " id " + textfmt.Escape(s.WorstID.String())
		}
		line(textfmt.Escape(s.Policy.Name), spec(s.Policy), strconv.Itoa(s.Requests), strconv.Itoa(s.Failed),
			strconv.Itoa(s.Late), strconv.Itoa(s.Unknown), strconv.Itoa(s.LongGaps), worst)
	}
	fmt.Fprintf(b, "\n%d %s in %s", r.Requests, textfmt.Plural(r.Requests, "request", "requests"), textfmt.Dur(r.Duration))
	if r.Open > 0 {
		fmt.Fprintf(b, "; %d still in flight at the end, not evaluated", r.Open)
	}
	if r.Omitted > 0 {
		fmt.Fprintf(b, "; %d rows past the first %d left out (the summary counts them)", r.Omitted, MaxRows)
	}
	b.WriteString("\n")
}
