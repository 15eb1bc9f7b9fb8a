package tap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

type listedSession struct {
	ID       string
	File     string
	Label    string
	Command  []string
	Started  time.Time
	Live     bool
	Ended    *time.Time
	TapPID   int    `json:"tap_pid"`
	HostPID  int    `json:"host_pid"`
	HostName string `json:"host_name"`
	Client   string `json:"client_name"`
	Version  string `json:"client_version"`
	Protocol string
	Size     int64
	Calls    int
	Errors   int
	CleanEnd bool `json:"clean_end"`
	Problem  string
}

func listSessions(t *testing.T) []listedSession {
	t.Helper()
	r := clitest.RunSonde(t, "", "sessions", "--json")
	clitest.CheckRun(t, r, 0, "")
	var list []listedSession
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	return list
}

func byLabel(list []listedSession) map[string]listedSession {
	m := map[string]listedSession{}
	for _, s := range list {
		m[s.Label] = s
	}
	return m
}

// TestSessionsLiveAndPrune: a session whose sonde tap still runs is listed
// live, first, with its calls so far; an ended one with its end, calls and
// errors; a file that is not a capture with the reason. prune --dry-run
// deletes nothing; prune --older-than deletes the old ended session only:
// never the live one, though its file is as old, and never a file that
// sonde tap did not name. Once its tap has ended, the live session is
// listed ended. replay takes a session's id, or the start of it.
func TestSessionsLiveAndPrune(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	dir := filepath.Join(home, "sessions")

	r := clitest.RunSonde(t, "", "sessions")
	clitest.CheckRun(t, r, 0, "")
	if r.Stdout != "No sessions in "+dir+".\n" {
		t.Errorf("no sessions: %q", r.Stdout)
	}

	fx := clitest.NewFixture(t)
	env := []string{"SONDE_HOME=" + home}
	ended := startHost(t, env, append([]string{os.Args[0], "tap", "--label", "old one", "--"}, fx.Argv()...)...)
	ended.write(initLine)
	ended.await(`"serverInfo"`, 1)
	ended.write(initialized, echoCall(2, "a", 0), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}`)
	ended.await(`"id":3`, 1)
	ended.stdin.Close()
	if code := ended.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, ended.stderr())
	}
	live := startHost(t, env, append([]string{os.Args[0], "tap", "--label", "live", "--"}, fx.Argv()...)...)
	live.write(initLine)
	live.await(`"serverInfo"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The recording reaches its file within the tap's recordFlush.
	list := listSessions(t)
	for deadline := time.Now().Add(10 * time.Second); byLabel(list)["live"].Calls == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		list = listSessions(t)
	}
	if len(list) != 3 || list[0].Label != "live" {
		t.Fatalf("sessions: %+v", list)
	}
	m := byLabel(list)
	l, e, n := m["live"], m["old one"], m["notes"]
	if !l.Live || l.Ended != nil || l.CleanEnd || l.Calls != 1 || l.TapPID != live.cmd.Process.Pid || l.HostPID != os.Getpid() || l.Command[1] != "fixture" {
		t.Errorf("live session: %+v", l)
	}
	if e.Live || e.Ended == nil || !e.CleanEnd || e.Calls != 3 || e.Errors != 1 || e.HostPID != os.Getpid() || !strings.HasPrefix(e.ID, "old_one-") || e.Size == 0 {
		t.Errorf("ended session: %+v", e)
	}
	// Who the host says it is, and the protocol the session speaks.
	if e.Client != "host" || e.Version != "1" || e.Protocol != "2025-06-18" {
		t.Errorf("ended session's host: %+v", e)
	}
	// The host's name, read by the tap where the system says it.
	if want := "tap.test"; runtime.GOOS == "linux" && (e.HostName != want || l.HostName != want) {
		t.Errorf("host names %q and %q, want %q (the test binary, /proc's 15 characters)", l.HostName, e.HostName, want)
	}
	if n.Live || n.Problem != "not a capture" {
		t.Errorf("not a capture: %+v", n)
	}
	r = clitest.RunSonde(t, "", "sessions")
	clitest.CheckRun(t, r, 0, "")
	for _, want := range []string{"ID ", "LABEL", "HOST ", "  host 1 · 2025-06-18  ", "STATE", "CALLS", "  live    ", "(not a capture)", "3 sessions in " + dir + "; sonde replay ID opens one.\n"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.Stdout)
		}
	}
	// The ID column is as wide as the longest id, whose pid has as many
	// digits as it happens to have.
	for _, row := range []string{regexp.QuoteMeta(l.ID) + ` +live `, regexp.QuoteMeta(e.ID) + ` +old one `} {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(r.Stdout) {
			t.Errorf("no row %q in:\n%s", row, r.Stdout)
		}
	}

	// Every file two days old.
	old := time.Now().Add(-48 * time.Hour)
	for _, s := range list {
		if err := os.Chtimes(s.File, old, old); err != nil {
			t.Fatal(err)
		}
	}
	r = clitest.RunSonde(t, "", "sessions", "prune", "--older-than", "1d", "--dry-run")
	clitest.CheckRun(t, r, 0, "")
	if !strings.HasPrefix(r.Stdout, "would delete "+e.ID+" (ended ") || !strings.Contains(r.Stdout, "\nDry run: 1 session (") || !strings.HasSuffix(r.Stdout, ") would be deleted; nothing was.\n") {
		t.Errorf("prune --dry-run:\n%s", r.Stdout)
	}
	if got := listSessions(t); len(got) != 3 {
		t.Fatalf("prune --dry-run deleted: %+v", got)
	}
	r = clitest.RunSonde(t, "", "sessions", "prune", "--older-than", "36h")
	clitest.CheckRun(t, r, 0, "")
	if !strings.HasPrefix(r.Stdout, "deleted "+e.ID+" ") || !strings.Contains(r.Stdout, "\n1 session deleted (") {
		t.Errorf("prune:\n%s", r.Stdout)
	}
	if _, err := os.Stat(e.File); !os.IsNotExist(err) {
		t.Errorf("the old session is still there: %v", err)
	}
	for _, f := range []string{l.File, n.File} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("prune deleted %s", f)
		}
	}

	// replay takes an id, or a prefix when only one session has it.
	clitest.CheckRun(t, clitest.RunSonde(t, "", "replay", "--serve", l.ID), 0, "")
	clitest.CheckRun(t, clitest.RunSonde(t, "", "replay", "--serve", "liv"), 0, "")
	clitest.WriteTestFile(t, filepath.Join(dir, "live-copy.jsonl"), "")
	r = clitest.RunSonde(t, "", "replay", "--serve", "live")
	clitest.CheckRun(t, r, 2, `sonde: "live" begins 2 sessions of `+dir+": "+l.ID+", live-copy; give more of the id (sonde sessions lists them)\n")

	live.stdin.Close()
	if code := live.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, live.stderr())
	}
	if l := byLabel(listSessions(t))["live"]; l.Live || l.Ended == nil || !l.CleanEnd {
		t.Errorf("after its tap ended: %+v", l)
	}
}

// TestSessionsPruneUsage: prune deletes nothing without --older-than, and
// refuses a duration that is not one.
func TestSessionsPruneUsage(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sessions", "prune"}, "sonde: sessions prune needs --older-than DURATION (nothing is deleted by default)\n"},
		{[]string{"sessions", "prune", "--older-than", "soon"}, `sonde: --older-than "soon": want a duration such as 90m, 36h or 7d` + "\n"},
		{[]string{"sessions", "prune", "--older-than", "-2d"}, `sonde: --older-than "-2d": want a positive duration` + "\n"},
		{[]string{"sessions", "prune", "--older-than", "0s"}, `sonde: --older-than "0s": want a positive duration` + "\n"},
	} {
		clitest.CheckRun(t, clitest.RunSonde(t, "", tc.args...), 2, tc.msg)
	}
	r := clitest.RunSonde(t, "", "sessions", "prune", "--older-than", "1h")
	clitest.CheckRun(t, r, 0, "")
	if r.Stdout != "0 sessions deleted (0B).\n" {
		t.Errorf("%q", r.Stdout)
	}
}

// TestSessionsKilledTap: a tap killed with SIGKILL leaves a recording
// without its end: once the tap is gone, it is listed ended, not clean,
// and shown as cut.
func TestSessionsKilledTap(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL")
	}
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	fx := clitest.NewFixture(t)
	h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", "killed", "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	if s := byLabel(listSessions(t))["killed"]; !s.Live {
		t.Fatalf("before the kill: %+v", s)
	}
	h.cmd.Process.Kill()
	h.wait()
	s := byLabel(listSessions(t))["killed"]
	if s.Live || s.CleanEnd || s.Ended == nil {
		t.Errorf("after the kill: %+v", s)
	}
	r := clitest.RunSonde(t, "", "sessions")
	if !strings.Contains(r.Stdout, " (cut) ") {
		t.Errorf("not shown cut:\n%s", r.Stdout)
	}
}

// sonde sessions counts the late, unknown and duplicate answers of a
// recording (a frame's raw text, whose quotes are escaped, cannot fool
// it), and not a request sonde injected among the host's calls.
func TestSessionsVerdictCounts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	lines := []string{
		`{"type":"header","format":"sonde-capture","version":"1.0","sonde":"test","start":"2026-12-01T10:00:00Z","transport":"stdio","command":["srv"]}`,
		`{"type":"request","seq":1,"t":1,"dir":"out","id":1,"method":"ping","state":"sent"}`,
		`{"type":"request","seq":2,"t":2,"dir":"out","id":"sonde-7-1","method":"ping","state":"sent"}`,
		`{"type":"frame","seq":3,"t":3,"dir":"in","id":1,"kind":"response","raw":"{\"x\":\",\\\"verdict\\\":\\\"late\\\"\"}","verdict":"resolved"}`,
		`{"type":"frame","seq":4,"t":4,"dir":"in","id":1,"kind":"response","raw":"{}","verdict":"late"}`,
		`{"type":"frame","seq":5,"t":5,"dir":"in","id":1,"kind":"response","raw":"{}","verdict":"duplicate"}`,
		`{"type":"frame","seq":6,"t":6,"dir":"in","id":9,"kind":"response","raw":"{}","verdict":"unknown"}`,
		`{"type":"frame","seq":7,"t":7,"dir":"in","id":9,"kind":"response","raw":"{}","verdict":"unknown"}`,
		`{"type":"end","t":8}`,
	}
	clitest.WriteTestFile(t, filepath.Join(home, "sessions", "counts-20261201-100000-1.jsonl"), strings.Join(lines, "\n")+"\n")
	r := clitest.RunSonde(t, "", "sessions", "--json")
	clitest.CheckRun(t, r, 0, "")
	var list []struct{ Calls, Late, Unknown, Duplicate int }
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if s := list[0]; s.Calls != 1 || s.Late != 1 || s.Unknown != 2 || s.Duplicate != 1 {
		t.Errorf("counts %+v, want 1 call, 1 late, 2 unknown, 1 duplicate", s)
	}
}
