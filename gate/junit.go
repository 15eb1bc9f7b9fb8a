package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// junitSuites is the root of a JUnit XML report (the schema Jenkins,
// GitLab and the GitHub test reporters read).
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the attributes a suite and the root share.
type junitCounts struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitSuite struct {
	junitCounts
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// listResults is one line per result: where, and what.
func (r *Report) listResults(results []Result) string {
	var b strings.Builder
	for _, res := range results {
		if res.Line > 0 {
			fmt.Fprintf(&b, "%s:%d: ", r.Artifact, res.Line)
		}
		if res.Seq > 0 {
			fmt.Fprintf(&b, "event %d: ", res.Seq)
		}
		b.WriteString(res.Message)
		b.WriteByte('\n')
	}
	return b.String()
}

// WriteJUnit writes the report as JUnit XML: a testsuite per session and
// in it a testcase per rule checked. A rule with results that fail the run
// (FailOn) is a failure listing them; one with results that do not fail is
// a pass listing them in system-out; a rule that could not be checked is
// skipped.
func (r *Report) WriteJUnit(w io.Writer) error {
	root := junitSuites{junitCounts: junitCounts{Name: strings.TrimSpace(r.Command + " " + r.Target)}}
	class := strings.ReplaceAll(r.Command, " ", ".")
	var total time.Duration
	for _, s := range r.Sessions {
		suite := junitSuite{junitCounts: junitCounts{Name: s.Name, Time: seconds(s.Duration)}}
		if !s.Start.IsZero() {
			suite.Timestamp = s.Start.UTC().Format("2006-01-02T15:04:05")
		}
		total += s.Duration
		for _, ri := range s.Checked {
			var found []Result
			for _, res := range s.Results {
				if res.Rule == ri.ID {
					found = append(found, res)
				}
			}
			tc := junitCase{Name: ri.ID, Classname: class, Time: "0"}
			switch why, skipped := s.Skipped[ri.ID]; {
			case skipped && len(found) == 0:
				tc.Skipped = &junitSkipped{Message: why}
				suite.Skipped++
			case len(found) > 0 && r.FailOn.Fails(ri):
				tc.Failure = &junitFailure{Message: fmt.Sprintf("%d %s: %s", len(found), textfmt.Plural(len(found), "result", "results"), found[0].Message), Type: ri.ID, Text: ri.Summary + "\n" + r.listResults(found)}
				suite.Failures++
			case len(found) > 0:
				tc.SystemOut = fmt.Sprintf("%d %s, not failing (--fail-on %s)\n%s", len(found), textfmt.Plural(len(found), "result", "results"), r.FailOn, r.listResults(found))
			}
			suite.Cases = append(suite.Cases, tc)
			suite.Tests++
		}
		root.Tests += suite.Tests
		root.Failures += suite.Failures
		root.Skipped += suite.Skipped
		root.Suites = append(root.Suites, suite)
	}
	root.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
