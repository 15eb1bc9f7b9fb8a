package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/lint"
)

func TestMain(m *testing.M) { capturetest.Main(m) }

// recordMixed records a real session against the fixture with a little of
// everything the gates look at: lines on stdout that are not JSON (lint's
// not-json, MUST), a tool result with isError, a JSON-RPC error, and a call
// that times out (deadline 400ms, answer due after 3s).
func recordMixed(t *testing.T) string {
	t.Helper()
	return capturetest.Record(t, capturetest.Options{Fixture: []string{"--fault", "stdout-noise"}}, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "tool-error", json.RawMessage(`{"message":"nope"}`), client.CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.CallTool(ctx, "fail", nil, client.CallOptions{}); err == nil {
			t.Fatal("fail did not fail")
		}
		_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x","delay_ms":3000}`), client.CallOptions{Timeout: 400 * time.Millisecond})
		if client.CodeOf(err) != client.CodeTimeout {
			t.Fatalf("slow echo: %v", err)
		}
	})
}

// collect folds a capture into a report, with each event's line.
func collect(t *testing.T, path string, failOn FailOn) (*Collector, *Report) {
	t.Helper()
	_, recs := capturetest.Records(t, path)
	evs := capturetest.Events(t, path)
	lines := map[uint64]int{}
	for _, r := range recs {
		if r.Seq != 0 {
			lines[r.Seq] = r.Line
		}
	}
	c := NewCollector("sonde lint", path, path, failOn)
	for _, ev := range evs {
		c.Add(ev, lines[ev.Seq])
	}
	return c, c.Report()
}

func mustFailOn(t *testing.T, s string) FailOn {
	t.Helper()
	f, err := ParseFailOn(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func byRule(rep *Report) map[string][]Result {
	out := map[string][]Result{}
	for _, s := range rep.Sessions {
		for _, r := range s.Results {
			out[r.Rule] = append(out[r.Rule], r)
		}
	}
	return out
}

// TestCollectorOutcomes: a real session's not-json lines, tool error,
// JSON-RPC error and timeout each become a result located at the line of
// the record that shows it; --fail-on decides which fail.
func TestCollectorOutcomes(t *testing.T) {
	path := recordMixed(t)
	_, recs := capturetest.Records(t, path)
	_, rep := collect(t, path, mustFailOn(t, "must"))
	if len(rep.Sessions) != 1 || !strings.HasPrefix(rep.Sessions[0].Name, "session 1: sonde-fixture") {
		t.Fatalf("sessions: %+v", rep.Sessions)
	}
	got := byRule(rep)
	for rule, want := range map[string]string{
		"not-json":    "line on stdout is not JSON",
		RuleToolError: "tools/call tool-error returned isError: true",
		RuleError:     "tools/call fail id ",
		RuleTimeout:   "tools/call echo id ",
	} {
		rs := got[rule]
		if len(rs) == 0 || !strings.Contains(rs[0].Message, want) {
			t.Errorf("%s: %+v, want a message with %q", rule, rs, want)
			continue
		}
		r := rs[0]
		if r.Line < 2 || r.Line > len(recs)+1 || recs[r.Line-2].Seq != r.Seq {
			t.Errorf("%s: line %d does not hold event %d", rule, r.Line, r.Seq)
		}
	}
	if !strings.Contains(got[RuleTimeout][0].Message, "MCP_TIMEOUT") {
		t.Errorf("timeout message: %s", got[RuleTimeout][0].Message)
	}
	fails := func(spec string) map[string]bool {
		rep.FailOn = mustFailOn(t, spec)
		out := map[string]bool{}
		for _, r := range rep.Failures() {
			out[r.Rule] = true
		}
		return out
	}
	for spec, want := range map[string][]string{
		"must":               {"not-json"},
		"should":             nil,
		"timeout,tool-error": {RuleTimeout, RuleToolError},
		"error":              {RuleError},
		"none":               nil,
		"all":                {"not-json", RuleTimeout, RuleToolError, RuleError},
	} {
		f := fails(spec)
		if len(f) != len(want) {
			t.Errorf("--fail-on %s: %v, want %v", spec, f, want)
		}
		for _, w := range want {
			if !f[w] {
				t.Errorf("--fail-on %s: %s does not fail", spec, w)
			}
		}
	}
}

func TestParseFailOn(t *testing.T) {
	f, err := ParseFailOn(" must, drift ,")
	if err != nil || !f[Must] || !f[Drift] || len(f) != 2 || f.String() != "must,drift" {
		t.Errorf("%v %v", f, err)
	}
	if _, err := ParseFailOn("must,bogus"); err == nil || !strings.Contains(err.Error(), `unknown kind "bogus"`) || !strings.Contains(err.Error(), KindList()) {
		t.Errorf("bogus: %v", err)
	}
	if f, _ := ParseFailOn("none"); f.String() != "none" {
		t.Errorf("none: %v", f)
	}
}

// schema compiles the SARIF 2.1.0 schema in testdata.
func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://json.schemastore.org/sarif-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

// TestSARIFValid: the SARIF log of a real session validates against the
// official schema, has a rule per rule checked, and puts each result at
// the line of its frame with the rule's level, "error" for what fails the
// run. The schema is shown to reject a log that breaks it.
func TestSARIFValid(t *testing.T) {
	s := schema(t)
	path := recordMixed(t)
	_, rep := collect(t, path, mustFailOn(t, "must,timeout"))
	var buf bytes.Buffer
	if err := rep.WriteSARIF(&buf, "v9.9.9"); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, buf.Bytes()); err != nil {
		t.Fatalf("sonde's SARIF is not valid: %v\n%s", err, buf.String())
	}
	var log struct {
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name, Version string
					Rules         []struct{ ID string }
				}
			}
			Results []struct {
				RuleID, Level string
				RuleIndex     int
				Message       struct{ Text string }
				Locations     []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || run.Tool.Driver.Name != "sonde" || run.Tool.Driver.Version != "v9.9.9" || len(run.Tool.Driver.Rules) != len(lint.Rules())+3 {
		t.Fatalf("log: %+v", log)
	}
	levels := map[string]string{}
	for _, r := range run.Results {
		levels[r.RuleID] = r.Level
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s: ruleIndex %d", r.RuleID, r.RuleIndex)
		}
		loc := r.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI != path || loc.Region.StartLine < 2 {
			t.Errorf("result %s: location %+v", r.RuleID, loc)
		}
	}
	want := map[string]string{"not-json": "error", RuleTimeout: "error", RuleToolError: "warning", RuleError: "warning"}
	for rule, level := range want {
		if levels[rule] != level {
			t.Errorf("%s: level %q, want %q", rule, levels[rule], level)
		}
	}
	// The check can fail: a result without a message breaks the schema.
	broken := bytes.Replace(buf.Bytes(), []byte(`"message": {`), []byte(`"messageX": {`), 1)
	if err := validate(t, s, broken); err == nil {
		t.Error("a result without a message passed the schema")
	}
}

// TestJUnit: a testsuite per session with a testcase per rule checked; a
// rule whose results fail the run is a failure listing them with their
// lines, one whose results do not is a pass that lists them.
func TestJUnit(t *testing.T) {
	path := recordMixed(t)
	_, rep := collect(t, path, mustFailOn(t, "must,tool-error"))
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var root struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &root); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(root.Suites) != 1 || root.Tests != len(lint.Rules())+3 || root.Failures != 2 || len(root.Suites[0].Cases) != len(lint.Rules())+3 {
		t.Fatalf("junit: %+v\n%s", root, buf.String())
	}
	for _, c := range root.Suites[0].Cases {
		switch c.Name {
		case "not-json", RuleToolError:
			if c.Failure == nil || !strings.Contains(c.Failure.Text, path+":") {
				t.Errorf("%s: %+v", c.Name, c)
			}
		case RuleTimeout, RuleError:
			if c.Failure != nil || !strings.Contains(c.Out, "not failing (--fail-on must,tool-error)") {
				t.Errorf("%s: %+v", c.Name, c)
			}
		default:
			if c.Failure != nil || c.Out != "" {
				t.Errorf("%s: %+v", c.Name, c)
			}
		}
	}
}

// TestSessionsSplit: a process start begins a new session (its own
// testsuite), and results stay with their session.
func TestSessionsSplit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	start := func(seq uint64) client.Event {
		return client.Event{Seq: seq, Time: t0, Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 1}}
	}
	note := func(seq uint64) client.Event { return client.Event{Seq: seq, Time: t0, Kind: client.EvNote, Note: "x"} }
	c := NewCollector("sonde lint", "f", "f", FailOn{})
	for _, ev := range []client.Event{start(1), note(2), start(1), note(2), note(3)} {
		c.Add(ev, 0)
	}
	rep := c.Report()
	if len(rep.Sessions) != 2 || rep.Sessions[1].Name != "session 2" {
		t.Fatalf("%+v", rep.Sessions)
	}
}

// TestSARIFCheckShape: a report as sonde check makes it (no capture:
// methods as logical locations; contracts; drift with a baseline, and a
// session skipping it) is valid SARIF too, and JUnit marks the skipped
// rule.
func TestSARIFCheckShape(t *testing.T) {
	path := recordMixed(t)
	c := NewCollector("sonde check", "./server", "", mustFailOn(t, "drift"))
	for _, ev := range capturetest.Events(t, path) {
		c.Add(ev, 0)
	}
	dir := t.TempDir()
	st := Store{Dir: dir}
	views := c.Views()
	if len(views) != 1 || len(views[0].Tools) == 0 {
		t.Fatalf("views: %+v", views)
	}
	b := NewBaseline("sonde-fixture", path, views[0], time.Now())
	b.Tools = b.Tools[1:] // one tool more than trusted
	if _, err := st.Save(b); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckDrift(st, func(s *diff.Shown) string { return s.Server.Name }); err != nil {
		t.Fatal(err)
	}
	rep := c.Report()
	con := &Contracts{ExpectTools: []string{"nope"}, ToolsCount: -1}
	rep.AddChecked(con.Rules(), con.Tools([]string{"echo"}, true))
	if !rep.Failed() || len(rep.Failures()) != 2 {
		t.Fatalf("failures: %+v", rep.Failures())
	}
	var buf bytes.Buffer
	if err := rep.WriteSARIF(&buf, "dev"); err != nil {
		t.Fatal(err)
	}
	if err := validate(t, schema(t), buf.Bytes()); err != nil {
		t.Fatalf("not valid: %v\n%s", err, buf.String())
	}
	if !strings.Contains(buf.String(), `"logicalLocations"`) || !strings.Contains(buf.String(), `"ruleId": "tool-drift"`) || !strings.Contains(buf.String(), `"ruleId": "expect-tool"`) {
		t.Errorf("sarif:\n%s", buf.String())
	}
	// Without a baseline the rule is skipped.
	c2 := NewCollector("sonde check", "./server", "", mustFailOn(t, "drift"))
	for _, ev := range capturetest.Events(t, path) {
		c2.Add(ev, 0)
	}
	if err := c2.CheckDrift(Store{Dir: t.TempDir()}, func(s *diff.Shown) string { return "x" }); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := c2.Report().WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<testcase name="tool-drift" classname="sonde.check" time="0">`) || !strings.Contains(buf.String(), `<skipped message="no baseline accepted for &#34;x&#34;`) {
		t.Errorf("junit:\n%s", buf.String())
	}
}
