package stats

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// barWidth is the longest bar of the in-flight histogram.
const barWidth = 50

// WriteText writes the report for a terminal: a table of methods, the
// concurrency summary and a histogram of requests in flight per bucket.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.Requests == 0 {
		b.WriteString("no requests ended in this capture\n")
	} else {
		w := len("method")
		for _, m := range r.Methods {
			w = max(w, utf8.RuneCountInString(m.name()))
		}
		row := func(name string, cells ...string) {
			b.WriteString(name + strings.Repeat(" ", w-utf8.RuneCountInString(name)))
			for _, c := range cells {
				fmt.Fprintf(&b, "  %8s", c)
			}
			b.WriteString("\n")
		}
		row("method", "count", "errors", "p50", "p95", "p99", "max")
		for _, m := range r.Methods {
			row(m.name(), strconv.Itoa(m.Count), strconv.Itoa(m.Errors), dur(m, m.P50), dur(m, m.P95), dur(m, m.P99), dur(m, m.Max))
		}
		for _, m := range r.Methods {
			if m.Errors > 0 {
				fmt.Fprintf(&b, "%s: %s\n", m.name(), m.outcomeText())
			}
		}
	}
	c := r.Concurrency
	fmt.Fprintf(&b, "\n%d %s in %s; at most %d in flight", r.Requests, textfmt.Plural(r.Requests, "request", "requests"), textfmt.Dur(r.Duration), c.Max)
	if c.Max > 0 {
		fmt.Fprintf(&b, " (first at %s)", offset(c.MaxAt))
	}
	b.WriteString("\n")
	if c.Max > 0 {
		fmt.Fprintf(&b, "\nin flight (most at once, per %s):\n", textfmt.Dur(c.Bucket))
		scale := 1.0
		if c.Max > barWidth {
			scale = float64(barWidth) / float64(c.Max)
		}
		for i, n := range c.InFlight {
			bar := strings.Repeat("█", int(float64(n)*scale+0.5))
			if n > 0 && bar == "" {
				bar = "▏"
			}
			fmt.Fprintf(&b, "%9s │%s %d\n", offset(time.Duration(i)*c.Bucket), bar, n)
		}
	}
	writeChains(&b, r.Chains)
	_, err := io.WriteString(w, b.String())
	return err
}

// name is the method as shown: the tool of a tools/call after it, and a
// server's request marked.
func (m Method) name() string {
	s := textfmt.Escape(m.Method)
	if m.Tool != "" {
		s += " " + textfmt.Escape(m.Tool)
	}
	if m.Dir == client.In.String() {
		s = "(server) " + s
	}
	return s
}

// outcomeText lists the outcomes that are not results: "1 timeout, 2 error".
func (m Method) outcomeText() string {
	var states []string
	for s := range m.Outcomes {
		if s != "resolved" && s != "answered" {
			states = append(states, s)
		}
	}
	slices.Sort(states)
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = fmt.Sprintf("%d %s", m.Outcomes[s], s)
	}
	return strings.Join(parts, ", ")
}

func dur(m Method, d time.Duration) string {
	if m.Answered == 0 {
		return "-"
	}
	return textfmt.Dur(d)
}

// offset is a time from the start: +0, +20.0ms, +1.5s.
func offset(d time.Duration) string {
	if d == 0 {
		return "+0"
	}
	return "+" + textfmt.Dur(d)
}
