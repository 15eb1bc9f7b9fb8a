package capfile_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// recordCall records `sonde call echo` against the fixture with its args.
func recordCall(t *testing.T, fixtureArgs ...string) string {
	t.Helper()
	return recordOK(t, []string{"call", "echo", "--args", `{"value":"hi"}`}, fixtureArgs...)
}

// recordOK is record of a run that must succeed; it returns the capture.
func recordOK(t *testing.T, sub []string, fixtureArgs ...string) string {
	t.Helper()
	path, r := record(t, "", sub, fixtureArgs...)
	if r.Code != 0 {
		t.Fatalf("%s: %d %s", sub[0], r.Code, r.Stderr)
	}
	return path
}

// TestCaptureErrors: every command that reads a capture says which file
// and why it cannot read it, with exit status 2; a cut last line is a
// warning.
func TestCaptureErrors(t *testing.T) {
	dir := t.TempDir()
	good := recordCall(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		clitest.WriteTestFile(t, p, s)
		return p
	}
	bad := write("bad.jsonl", lines[0]+lines[1]+"{not json\n"+strings.Join(lines[2:], ""))
	cut := write("cut.jsonl", string(data[:len(data)-len(lines[len(lines)-2])/2-1]))
	// A hostile latency (its negation overflows: it once sent the duration
	// formatter into endless recursion) and a second header.
	hostile := write("hostile.jsonl", lines[0]+lines[1]+`{"type":"request","seq":99,"t":5,"dir":"out","id":1,"method":"tools/call","state":"done","latency":-9223372036854775808}`+"\n"+strings.Join(lines[2:], ""))
	twice := write("twice.jsonl", lines[0]+lines[1]+lines[0]+strings.Join(lines[2:], ""))
	for _, cmd := range []string{"lint", "stats", "export"} {
		for _, tc := range []struct{ path, want string }{
			{filepath.Join(dir, "missing.jsonl"), "sonde: capture " + filepath.Join(dir, "missing.jsonl") + ": no such file or directory\n"},
			{dir, "sonde: capture " + dir + ": is a directory\n"},
			{write("readme.md", "# not a capture\n"), ": line 1: not a sonde capture: the first line is not a JSON header"},
			{write("empty.jsonl", ""), ": line 1: not a sonde capture: the file is empty"},
			{write("newer.jsonl", regexp.MustCompile(`"version":"[0-9.]+"`).ReplaceAllString(lines[0], `"version":"9.0"`)), ": line 1: capture format is newer than this sonde: version 9.0"},
			{bad, "bad.jsonl: line 3: bad capture record: "},
			{hostile, "hostile.jsonl: line 3: bad capture record: latency -9223372036854775808 ns is out of range"},
			{twice, "twice.jsonl: line 3: bad capture record: a second header line"},
		} {
			r := clitest.RunSonde(t, "", cmd, tc.path)
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
				t.Errorf("%s %s: %d %q %q, want 2 and %q", cmd, tc.path, r.Code, r.Stdout, r.Stderr, tc.want)
			}
		}
		r := clitest.RunSonde(t, "", cmd, cut)
		if r.Code != 0 || !strings.Contains(r.Stderr, "cut.jsonl: warning: capture line") || !strings.Contains(r.Stderr, "is incomplete") {
			t.Errorf("%s of a cut capture: %d %q", cmd, r.Code, r.Stderr)
		}
		if r := clitest.RunSonde(t, "", cmd); r.Code != 2 || !strings.Contains(r.Stderr, cmd+" takes one capture FILE") {
			t.Errorf("%s without a file: %d %q", cmd, r.Code, r.Stderr)
		}
	}
}
