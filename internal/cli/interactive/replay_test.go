package interactive_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// TestReplayUIBadCapture: a capture that cannot be read fails before the UI
// opens, naming the file and the reason, with exit status 2 (as for lint);
// a wrong number of arguments is a usage error too.
func TestReplayUIBadCapture(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	clitest.WriteTestFile(t, notCapture, "just some notes\n")
	newer := filepath.Join(dir, "newer.jsonl")
	clitest.WriteTestFile(t, newer, `{"type":"header","format":"sonde-capture","version":"9.0","start":"2026-01-01T00:00:00Z","transport":"stdio"}`+"\n")
	missing := filepath.Join(dir, "missing.jsonl")
	cases := []struct {
		name    string
		args    []string
		code    int
		errLine string
	}{
		{"missing", []string{"replay", missing}, cmdutil.ExitUsage, "sonde: capture " + missing + ": no such file\n"},
		{"not a capture", []string{"replay", notCapture}, cmdutil.ExitUsage, "sonde: capture " + notCapture + ": capture line 1: not a sonde capture: the first line is not a JSON header: invalid character 'j' looking for beginning of value\n"},
		{"newer", []string{"replay", newer}, cmdutil.ExitUsage, "sonde: capture " + newer + ": capture line 1: capture format is newer than this sonde: version 9.0; this sonde reads version 1.x and older (upgrade sonde)\n"},
		{"no file", []string{"replay"}, cmdutil.ExitUsage, "sonde: replay needs a capture FILE, --serve FILE or --against FILE (see sonde replay --help)\n"},
		{"two files", []string{"replay", "a", "b"}, cmdutil.ExitUsage, "sonde: sonde replay takes one capture FILE; a server command goes with --against FILE -- COMMAND (see sonde replay --help)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.RunSonde(t, "", tc.args...)
			clitest.CheckRun(t, r, tc.code, tc.errLine)
			if r.Stdout != "" {
				t.Errorf("stdout = %q (the UI must not open)", r.Stdout)
			}
		})
	}
}

// TestReplayUIHelp: --help names the keys and the exit status.
func TestReplayUIHelp(t *testing.T) {
	r := clitest.RunSonde(t, "", "replay", "--help")
	clitest.CheckRun(t, r, cmdutil.ExitOK, "")
	for _, want := range []string{"sonde replay FILE", "play / pause", "step one event back", "next / previous error", "exit\n      status 2", "--frames int"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestReplayUIRecordedSession records a real session against the fixture
// (tools/list, with stdout noise) and opens it as the replay does: every
// event is on the timeline, the noise is found as the first problem, the
// tool list at the end is the fixture's, the server is named by the
// session record, and the pending map rebuilt at every position equals
// the fold of the events up to there.
func TestReplayUIRecordedSession(t *testing.T) {
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "tools.jsonl")
	r := clitest.RunSonde(t, "", f.Cmd([]string{"tools", "--record", path}, "--fault", "stdout-noise")...)
	if r.Code != cmdutil.ExitOK {
		t.Fatalf("sonde tools: %d\n%s", r.Code, r.Stderr)
	}
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	_, recs := capturetest.Records(t, path)
	events := 0
	for _, rec := range recs {
		switch rec.Type {
		case capture.TypeFrame, capture.TypeRequest, capture.TypeStderr, capture.TypeProcess, capture.TypeNote, capture.TypeHTTP:
			events++
		}
	}
	if tl.Len() != events || events == 0 {
		t.Fatalf("timeline has %d events, the capture %d", tl.Len(), events)
	}
	evs, err := tl.Read(0, tl.Len())
	if err != nil {
		t.Fatal(err)
	}
	p := tl.NextProblem(0)
	if p < 0 || evs[p].Kind != client.EvFrame || evs[p].Frame.Verdict != client.VerdictMalformed {
		t.Fatalf("first problem %d, want the noise on stdout", p)
	}
	tools, err := tl.Tools(tl.ToolsAt(tl.Len()))
	if err != nil || len(tools) == 0 || tools[0].Name != "echo" {
		t.Fatalf("tool list at the end: %d tools, %v", len(tools), err)
	}
	for _, tool := range tools { // the list sonde tools printed
		if !strings.Contains(r.Stdout, tool.Name) {
			t.Errorf("tool %q is not in the output of sonde tools:\n%s", tool.Name, r.Stdout)
		}
	}
	if n := tl.ToolsAt(p); n != 0 {
		t.Errorf("a tool list before tools/list: %d", n)
	}
	s, err := tl.Session(tl.SessionAt(tl.Len()))
	if err != nil || s.ServerName != "sonde-fixture" {
		t.Fatalf("session %+v, %v", s, err)
	}
	st := theme.New(theme.NoColor())
	for k := 0; k <= tl.Len(); k++ {
		now := tl.Header().Start.Add(tl.Time(k))
		full := pending.New(st)
		full.Apply(evs[:k])
		full.SetNow(now)
		carry, from := tl.Plan(k)
		rest, err := tl.Read(from, k)
		if err != nil {
			t.Fatal(err)
		}
		re := pending.New(st)
		re.Apply(append(tl.Events(carry), rest...))
		re.SetNow(now)
		if got, want := pendingText(re.Entries()), pendingText(full.Entries()); got != want {
			t.Fatalf("position %d: rebuilt pending map\n%s\nwant\n%s", k, got, want)
		}
	}
}

// pendingText is a pending map as sorted lines.
func pendingText(es []pending.Entry) string {
	var lines []string
	for _, e := range es {
		lines = append(lines, e.Dir.String()+" "+e.ID.String()+" "+e.Method+" "+string(e.State)+" "+e.Age.String()+" "+e.Remaining.String())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
