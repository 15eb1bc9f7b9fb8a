package tap_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/report"
)

// TestExportLanes: the export of a tap's recording names the client's
// lane after the host (its clientInfo), not sonde, and draws the request
// sonde injected into the session, and its answer, on a lane of sonde's
// own; the host's requests stay on the host's.
func TestExportLanes(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	h := liveTap(t, home, "lanes")
	h.write(initialized)
	r := clitest.RunSonde(t, "", "inject", "tools/call", "--params", `{"name":"echo","arguments":{"value":"injected by sonde"}}`)
	clitest.CheckRun(t, r, 0, "")
	h.write(echoCall(2, "the host's own", 0))
	h.await(`"id":2`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("tap exit %d\n%s", code, h.stderr())
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "lanes-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")

	r = clitest.RunSonde(t, "", "export", id)
	clitest.CheckRun(t, r, 0, "")
	for _, re := range []string{
		`(?m)^    participant C as host\n    participant I as sonde\n    participant S as sonde-fixture$`,
		`(?m)^    C->>S: initialize \[id 1\]$`,
		`(?m)^    I->>S: tools/call echo \[id "sonde-\d+-1"\]$`,
		`(?m)^    S-->>I: result \[id "sonde-\d+-1"\]`,
		`(?m)^    C->>S: tools/call echo \[id 2\]$`,
		`(?m)^    S-->>C: result \[id 2\]`,
	} {
		if !regexp.MustCompile(re).MatchString(r.Stdout) {
			t.Errorf("the Mermaid export lacks %s:\n%s", re, r.Stdout)
		}
	}
	if regexp.MustCompile(`C->>S: tools/call echo \[id "sonde-`).MatchString(r.Stdout) {
		t.Errorf("the injected call is on the host's lane:\n%s", r.Stdout)
	}

	// The HTML report's figures: the host's calls, sonde's apart; its
	// diagram's lanes.
	b := report.New(capture.Header{}, report.Options{File: id})
	for _, ev := range capturetest.Events(t, files[0]) {
		b.Add(ev)
	}
	m := b.Model()
	if m.Meta.Calls != 1 || m.Meta.Requests != 2 || m.Meta.Injected != 1 || m.Meta.InjectedErrors != 0 {
		t.Errorf("report: calls %d, requests %d, injected %d (%d errors); want the host's 1 call of 2 requests, sonde's 1",
			m.Meta.Calls, m.Meta.Requests, m.Meta.Injected, m.Meta.InjectedErrors)
	}
	if d := m.Diagram; d.Client != "host" || !d.Injected {
		t.Errorf("report diagram: client %q, injected %v", d.Client, d.Injected)
	}
	inj := 0
	for _, s := range m.Spans {
		if s.Injected {
			inj++
			if !strings.HasPrefix(s.ID, `"sonde-`) {
				t.Errorf("span %s marked injected", s.ID)
			}
		}
	}
	if inj != 1 {
		t.Errorf("%d spans injected, want 1: %+v", inj, m.Spans)
	}

	r = clitest.RunSonde(t, "", "export", "--format", "text", "--width", "100", id)
	clitest.CheckRun(t, r, 0, "")
	lines := strings.Split(r.Stdout, "\n")
	if !regexp.MustCompile(`^time +host +sonde +sonde-fixture$`).MatchString(lines[0]) {
		t.Errorf("the text export's lanes: %q", lines[0])
	}
	bar := strings.Index(lines[0], "sonde ") // sonde's lane starts under its name
	for _, l := range lines[1:] {
		injected := strings.Contains(l, `"sonde-`)
		if injected && (len([]rune(l)) < bar || !strings.HasPrefix(string([]rune(l)[bar-1:]), "│")) {
			t.Errorf("an injected step not from sonde's lane (column %d): %q", bar, l)
		}
		if !injected && strings.Contains(l, "[id 2]") && strings.Contains(string([]rune(l)[bar-1:bar]), "│") {
			t.Errorf("a host's step from sonde's lane: %q", l)
		}
	}
}
