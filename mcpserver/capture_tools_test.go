package mcpserver_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

// captures are real captures of the repository: fixture sessions, and the
// hand-written lint samples (one rule each).
func captures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../testdata/captures/lint/*.jsonl")
	if err != nil || len(paths) < 5 {
		t.Fatalf("lint samples: %v %v", paths, err)
	}
	return append(paths, "../testdata/captures/out-of-order-late-crash.jsonl", "../testdata/captures/concurrent-calls.jsonl")
}

// asJSON is v through JSON, as a client reads it.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fromJSON reads a command's JSON output.
func fromJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return out
}

// TestLintSameAsCommand: capture_lint's findings, counts and rules are
// sonde lint --json's, for every real capture of the repository.
func TestLintSameAsCommand(t *testing.T) {
	found := 0
	for _, path := range captures(t) {
		r := clitest.RunSonde(t, "", "lint", "--json", path)
		want := fromJSON(t, r.Stdout)
		got, err := mcpserver.Lint(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		g := asJSON(t, got).(map[string]any)
		for _, f := range g["findings"].([]any) {
			delete(f.(map[string]any), "line") // the tool's own addition
		}
		for _, k := range []string{"findings", "counts", "rules"} {
			if !reflect.DeepEqual(g[k], want[k]) {
				t.Errorf("%s: %s\n got %v\nwant %v", path, k, g[k], want[k])
			}
		}
		if got.Total != len(want["findings"].([]any)) || got.Omitted != 0 {
			t.Errorf("%s: total %d omitted %d", path, got.Total, got.Omitted)
		}
		found += got.Total
		if s := got.Summary(); got.Total > 0 && !strings.Contains(s, got.Findings[0].Rule) {
			t.Errorf("%s: summary %q", path, s)
		}
	}
	if found == 0 {
		t.Fatal("no finding in any sample: the comparison proved nothing")
	}
}

// TestStatsSameAsCommand: capture_stats is sonde stats --json.
func TestStatsSameAsCommand(t *testing.T) {
	for _, path := range captures(t) {
		r := clitest.RunSonde(t, "", "stats", "--json", path)
		want := fromJSON(t, r.Stdout)
		got, err := mcpserver.Stats(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		g := asJSON(t, got).(map[string]any)
		for _, k := range []string{"duration", "requests", "methods", "concurrency", "context_cost"} {
			if !reflect.DeepEqual(g[k], want[k]) {
				t.Errorf("%s: %s\n got %v\nwant %v", path, k, g[k], want[k])
			}
		}
	}
	got, err := mcpserver.Stats("../testdata/captures/concurrent-calls.jsonl")
	if err != nil || got.Requests == 0 || !strings.Contains(got.Summary(), "in flight") {
		t.Errorf("stats of concurrent-calls: %+v %v", got, err)
	}
}

// TestDiffSameAsCommand: capture_diff is sonde diff --json, both ways
// round and against itself.
func TestDiffSameAsCommand(t *testing.T) {
	a, b := "../testdata/captures/out-of-order-late-crash.jsonl", "../testdata/captures/concurrent-calls.jsonl"
	for _, pair := range [][2]string{{a, b}, {b, a}, {a, a}} {
		r := clitest.RunSonde(t, "", "diff", "--json", pair[0], pair[1])
		want := fromJSON(t, r.Stdout)
		got, err := mcpserver.Diff(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		g := asJSON(t, got).(map[string]any)
		for _, k := range []string{"differs", "changes", "calls", "costs", "old_total", "new_total"} {
			if !reflect.DeepEqual(g[k], want[k]) {
				t.Errorf("%v: %s\n got %v\nwant %v", pair, k, g[k], want[k])
			}
		}
		if got.Differs == (pair[0] == pair[1]) {
			t.Errorf("%v: differs %v", pair, got.Differs)
		}
		if s := got.Summary(); got.Differs == strings.HasPrefix(s, "no differences") {
			t.Errorf("%v: summary %q", pair, s)
		}
	}
}

// TestCaptureReadErrors: a missing file, a directory, a file that is not
// a capture and one damaged in the middle are each an ErrCapture naming
// the file and what to do; a cut last line is a warning.
func TestCaptureReadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("../testdata/captures/out-of-order-late-crash.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notCapture := write("notes.txt", "hello\n")
	damaged := write("damaged.jsonl", lines[0]+lines[1]+"{not json\n"+strings.Join(lines[2:], ""))
	cut := write("cut.jsonl", strings.Join(lines[:len(lines)-2], "")+lines[len(lines)-2][:10])
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "missing.jsonl"), "no such file"},
		{dir, "is a directory"},
		{notCapture, "not a sonde capture"},
		{damaged, "line 3"},
	}
	for _, c := range cases {
		for name, run := range map[string]func(string) error{
			"lint":  func(p string) error { _, err := mcpserver.Lint(p); return err },
			"stats": func(p string) error { _, err := mcpserver.Stats(p); return err },
			"diff":  func(p string) error { _, err := mcpserver.Diff(p, p); return err },
		} {
			err := run(c.path)
			if !errors.Is(err, mcpserver.ErrCapture) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s: %v (want ErrCapture with %q)", name, c.path, err, c.want)
			}
		}
	}
	got, err := mcpserver.Lint(cut)
	if err != nil || len(got.Warnings) == 0 {
		t.Errorf("a cut last line: %+v %v", got, err)
	}
}

// TestLintCapped: a capture with more findings than an answer lists gives
// the first 200, and counts them all as sonde lint does.
func TestLintCapped(t *testing.T) {
	fx := clitest.NewFixture(t)
	noisy := filepath.Join(t.TempDir(), "noisy.jsonl")
	if r := clitest.RunSonde(t, "", fx.Cmd([]string{"call", "echo", "--args", `{"value":"hi"}`, "--record", noisy}, "--fault", "stdout-noise")...); r.Code != 0 {
		t.Fatalf("call --record: %d %s", r.Code, r.Stderr)
	}
	data, err := os.ReadFile(noisy)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	var bad string
	for _, l := range lines {
		if strings.Contains(l, `"verdict":"malformed"`) {
			bad = strings.TrimSuffix(l, "\n")
		}
	}
	if bad == "" {
		t.Fatalf("no malformed frame in\n%s", data)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(bad), &rec); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(string(data))
	for i := range 300 {
		rec["seq"] = 100000 + i
		line, _ := json.Marshal(rec)
		b.Write(append(line, '\n'))
	}
	big := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(big, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := mcpserver.Lint(big)
	if err != nil {
		t.Fatal(err)
	}
	want := fromJSON(t, clitest.RunSonde(t, "", "lint", "--json", big).Stdout)
	if n := len(want["findings"].([]any)); got.Total != n || n < 300 || len(got.Findings) != 200 || got.Omitted != n-200 || got.Counts["not-json"] != n {
		t.Errorf("total %d, listed %d, omitted %d, counts %v; sonde lint: %d", got.Total, len(got.Findings), got.Omitted, got.Counts, n)
	}
	if s := got.Summary(); !strings.Contains(s, "(the first 200 listed)") {
		t.Errorf("summary %q", s)
	}
}
