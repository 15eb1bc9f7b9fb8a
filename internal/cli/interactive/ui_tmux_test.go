package interactive_test

// Real-terminal tests of the interactive UI: sonde runs in a tmux pane (a
// real pty with a fixed size and TERM=xterm-256color), keys go in with
// send-keys and the screen comes back with capture-pane. Every wait polls
// the screen until everything that proves a state is on it, with a bound
// that only guards against a hang (it is not a speed claim).
//
// sonde is this test binary acting as sonde (SONDE_TEST_MAIN=1, so it runs
// with the race detector too); its server is `sonde fixture --pid-file P`,
// so each test proves at the end that no fixture process is left.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/proctest"
)

// tuiWait bounds each wait for a screen state or for sonde to exit.
const tuiWait = 10 * time.Second

// tuiSessions numbers the tmux servers of this test process.
var tuiSessions atomic.Int64

// tuiTerm is sonde running in its own tmux server.
type tuiTerm struct {
	t    *testing.T
	tmux string // path of the tmux binary
	sock string // the -L label of this test's tmux server
	dir  string // tmux.conf, sonde's stderr and exit status
	last string // the last screen captured
}

// tuiTarget is the tmux session (and so window and pane) sonde runs in.
const tuiTarget = "sonde"

// needTmux returns the path of tmux. Without it the test is skipped, except
// in CI (CI set), where `make test` installs it and its absence is a failure.
func needTmux(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("tmux is required for the real-terminal tests in CI (make tools installs it): %v", err)
	}
	t.Skip("skipping the real-terminal UI test: tmux is not installed (make tools installs it)")
	return ""
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// startTUI runs sonde with args in a new tmux server whose only pane is
// w x h (checked). The tmux server is killed when the test ends, whatever
// happened.
func startTUI(t *testing.T, w, h int, args []string) *tuiTerm {
	t.Helper()
	tt := &tuiTerm{
		t:    t,
		tmux: needTmux(t),
		sock: fmt.Sprintf("sonde-test-%d-%d", os.Getpid(), tuiSessions.Add(1)),
		dir:  t.TempDir(),
	}
	// tmux reads no user configuration; the pane gets TERM=xterm-256color
	// and runs the command with /bin/sh; no status line takes a row.
	conf := filepath.Join(tt.dir, "tmux.conf")
	const confText = "set -g default-terminal xterm-256color\n" +
		"set -g default-shell /bin/sh\n" +
		"set -g status off\n" +
		"set -g history-limit 0\n"
	clitest.WriteTestFile(t, conf, confText)
	var sockPath string
	t.Cleanup(func() {
		// The server is usually gone already (its only pane exited), but
		// tmux leaves its socket file behind.
		_, _ = tt.exec("kill-server")
		if sockPath != "" {
			_ = os.Remove(sockPath)
		}
	})

	// sonde's stderr goes to a file (a race report or a panic ends up there,
	// and the UI draws on stdout); its exit status is written atomically.
	words := []string{shQuote(os.Args[0])}
	for _, a := range args {
		words = append(words, shQuote(a))
	}
	exports := []string{"TERM=xterm-256color"}
	exports = append(exports, clitest.ChildEnv()...)
	for i, kv := range exports {
		exports[i] = shQuote(kv)
	}
	status, tmp := filepath.Join(tt.dir, "status"), filepath.Join(tt.dir, "status.tmp")
	script := "unset NO_COLOR; export " + strings.Join(exports, " ") + "; " +
		strings.Join(words, " ") + " 2>" + shQuote(filepath.Join(tt.dir, "stderr")) +
		"; echo $? >" + shQuote(tmp) + " && mv " + shQuote(tmp) + " " + shQuote(status)
	tt.run("-f", conf, "new-session", "-d", "-s", tuiTarget,
		"-x", strconv.Itoa(w), "-y", strconv.Itoa(h), script)

	info := strings.TrimSuffix(tt.run("display-message", "-p", "-t", tuiTarget, "#{pane_width}x#{pane_height} #{socket_path}"), "\n")
	size, path, _ := strings.Cut(info, " ")
	sockPath = path
	if want := fmt.Sprintf("%dx%d", w, h); size != want {
		t.Fatalf("tmux pane is %q, want %s", size, want)
	}
	return tt
}

// run runs one tmux command against this test's server and returns its
// output; a failure fails the test.
func (tt *tuiTerm) run(args ...string) string {
	tt.t.Helper()
	out, err := tt.exec(args...)
	if err != nil {
		tt.t.Fatalf("tmux %s: %v\n%s%s", strings.Join(args, " "), err, out, tt.diag())
	}
	return out
}

func (tt *tuiTerm) exec(args ...string) (string, error) {
	cmd := exec.Command(tt.tmux, append([]string{"-L", tt.sock}, args...)...)
	cmd.Env = tmuxEnv()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tmuxEnv is the environment of the tmux commands, and so of the tmux
// server and of the shell in its pane: this process's, without NO_COLOR
// and without a link to a tmux session the tests may run in.
func tmuxEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "NO_COLOR" || k == "TMUX" || k == "TMUX_PANE" || k == "TERM"
	})
	return append(env, "TERM=xterm-256color")
}

// keys sends tmux key names (Space, Tab, Enter, Escape, C-s, or a single
// character).
func (tt *tuiTerm) keys(keys ...string) {
	tt.t.Helper()
	tt.run(append([]string{"send-keys", "-t", tuiTarget}, keys...)...)
}

// text types s literally.
func (tt *tuiTerm) text(s string) {
	tt.t.Helper()
	tt.run("send-keys", "-t", tuiTarget, "-l", s)
}

// screen captures the pane as plain text.
func (tt *tuiTerm) screen() string {
	tt.t.Helper()
	out, err := tt.exec("capture-pane", "-p", "-t", tuiTarget)
	if err != nil {
		tt.t.Fatalf("capture-pane: %v\n%s%s", err, out, tt.diag())
	}
	tt.last = out
	return out
}

// screenMatches reports whether every pattern (a regexp, multi-line mode)
// matches the screen; a pattern starting with "!" must not match.
func screenMatches(screen string, patterns []string) bool {
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if regexp.MustCompile("(?m)"+strings.TrimPrefix(p, "!")).MatchString(screen) == neg {
			return false
		}
	}
	return true
}

// waitFor polls the screen until all patterns hold at once (see
// screenMatches) and returns that screen; after tuiWait it fails the test.
func (tt *tuiTerm) waitFor(what string, patterns ...string) string {
	tt.t.Helper()
	deadline := time.Now().Add(tuiWait)
	for {
		s := tt.screen()
		if screenMatches(s, patterns) {
			return s
		}
		if time.Now().After(deadline) {
			var missing []string
			for _, p := range patterns {
				if !screenMatches(s, []string{p}) {
					missing = append(missing, p)
				}
			}
			tt.t.Fatalf("waiting for %s: after %v the screen does not match %q%s", what, tuiWait, missing, tt.diag())
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// waitExit waits until sonde has exited and returns its exit status.
func (tt *tuiTerm) waitExit() int {
	tt.t.Helper()
	deadline := time.Now().Add(tuiWait)
	for {
		b, err := os.ReadFile(filepath.Join(tt.dir, "status"))
		if err == nil {
			code, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				tt.t.Fatalf("exit status file: %q", b)
			}
			return code
		}
		if !errors.Is(err, os.ErrNotExist) {
			tt.t.Fatal(err)
		}
		if time.Now().After(deadline) {
			if s, err := tt.exec("capture-pane", "-p", "-t", tuiTarget); err == nil {
				tt.last = s
			}
			tt.t.Fatalf("sonde did not exit within %v%s", tuiWait, tt.diag())
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// leave presses q from the top level: the Pending pane is focused first
// (1), since q quits only from there, and with requests in flight q asks,
// so q again.
func (tt *tuiTerm) leave() {
	tt.t.Helper()
	tt.keys("1")
	tt.keys("q")
	for deadline := time.Now().Add(tuiWait); time.Now().Before(deadline); time.Sleep(40 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(tt.dir, "status")); err == nil {
			return
		}
		if s, err := tt.exec("capture-pane", "-p", "-t", tuiTarget); err == nil && strings.Contains(s, "in flight: q again quits") {
			tt.keys("q")
			return
		}
	}
}

// quit leaves and checks that sonde exits with status 0 and wrote nothing
// on stderr.
func (tt *tuiTerm) quit() {
	tt.t.Helper()
	tt.leave()
	if code := tt.waitExit(); code != 0 {
		tt.t.Errorf("sonde exited with status %d, want 0%s", code, tt.diag())
	}
	if b, _ := os.ReadFile(filepath.Join(tt.dir, "stderr")); len(b) > 0 {
		tt.t.Errorf("sonde wrote on stderr:\n%s", b)
	}
}

// diag is what a failure message shows: the last screen and sonde's stderr.
func (tt *tuiTerm) diag() string {
	b, _ := os.ReadFile(filepath.Join(tt.dir, "stderr"))
	return fmt.Sprintf("\nlast screen:\n%s\nsonde's stderr:\n%s", tt.last, b)
}

// submatch returns the first submatch of re on the screen, or fails.
func submatch(t *testing.T, screen, re string) string {
	t.Helper()
	m := regexp.MustCompile("(?m)" + re).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("screen does not match %s:\n%s", re, screen)
	}
	return m[1]
}

// lineIndex returns the index of the first screen line matching re, or -1.
func lineIndex(screen, re string) int {
	r := regexp.MustCompile(re)
	for i, l := range strings.Split(screen, "\n") {
		if r.MatchString(l) {
			return i
		}
	}
	return -1
}

// startedPIDs returns the pids of the "pid N started" lines of the stderr
// pane, in order.
func startedPIDs(screen string) []int {
	var pids []int
	for _, m := range regexp.MustCompile(`── pid (\d+) started: `).FindAllStringSubmatch(screen, -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	return pids
}

// checkPIDs checks that the pids in the stderr pane are the ones the
// fixture recorded, in order, and that none of them is still running.
func checkPIDs(t *testing.T, f *clitest.Fixture, screen string, want int) {
	t.Helper()
	f.AssertStarted(want)
	if got, recorded := startedPIDs(screen), f.PIDs(); !slices.Equal(got, recorded) {
		t.Errorf("stderr pane shows started pids %v, the fixture recorded %v", got, recorded)
	}
	proctest.AssertGone(t, f.PIDFile)
}

// handshake are the patterns of a finished handshake: the status bar names
// the server (the lesson is attached to the client then), the tools are
// listed, and tools/list (id 2) is resolved in Frames.
var handshake = []string{`sonde-fixture 0\.1\.0`, `─ 3 Tools 9 `, `<- 2\s+response\s+resolved`}

// TestTUIDemo walks `sonde demo` in a 120x40 terminal: the out-of-order
// answers, the FIFO comparison, the late answer, the cancel, the crash and
// the restart, then quits.
func TestTUIDemo(t *testing.T) {
	f := clitest.NewFixture(t)
	// --slow 6s: the slow call must still be pending when the fast answer is
	// first seen, however loaded the machine is.
	tt := startTUI(t, 120, 40, f.Cmd([]string{"demo", "--slow", "6s"}))

	tt.waitFor("the panes and the first lesson step", append([]string{
		`─ 1 Pending `, `─ 2 Frames `, `─ 3 Tools `, `─ 4 stderr `,
		`─ 5 Lesson 1/13: responses are matched by id `,
		`── pid \d+ started: `, `space next lesson step`,
	}, handshake...)...)
	// NO_COLOR is unset and TERM is xterm-256color: the UI draws in colour.
	if styled := tt.run("capture-pane", "-e", "-p", "-t", tuiTarget); !regexp.MustCompile(`\x1b\[(?:[0-9;]*;)?38;[25];`).MatchString(styled) {
		t.Errorf("the screen has no foreground colour:\n%q", styled)
	}

	// Two calls: slow first, then fast. The fast one (the higher id) is
	// answered first and settles its own id while the slow one stays
	// pending.
	tt.keys("Space")
	s := tt.waitFor("the two calls", `Lesson 2/13: two calls in flight`, `Sent id \d+ \(echo "slow".* and id \d+ \(echo "fast"\)`)
	slow := submatch(t, s, `Sent id (\d+) \(echo "slow"`)
	fast := submatch(t, s, `and id (\d+) \(echo "fast"\)`)
	if a, b := atoiT(t, slow), atoiT(t, fast); b <= a {
		t.Fatalf("fast id %d is not higher than slow id %d", b, a)
	}
	s = tt.waitFor("the fast answer", `<- `+fast+`\s+response\s+resolved`, `fast: resolved after `)
	// The slow call is answered after 6s: on the first screen with the fast
	// answer, it must still be pending.
	if !screenMatches(s, []string{`^│\s*` + slow + `\s+(?:tools/)?call(?: \S+)?\s+(queued|sent)\s`, `slow: pending`, `!<- ` + slow + `\s+response`}) {
		t.Errorf("when id %s (fast) resolved, id %s (slow) is not pending in Pending and the lesson:\n%s", fast, slow, s)
	}
	s = tt.waitFor("the slow answer", `<- `+slow+`\s+response\s+resolved`, `slow: resolved after `)
	if iFast, iSlow := lineIndex(s, `<- `+fast+`\s+response\s+resolved`), lineIndex(s, `<- `+slow+`\s+response\s+resolved`); iFast >= iSlow {
		t.Errorf("Frames shows the response to %s (line %d) after the one to %s (line %d), want before:\n%s", fast, iFast, slow, iSlow, s)
	}
	if iSlow, iFast := lineIndex(s, `-> `+slow+`\s+(?:tools/)?call`), lineIndex(s, `-> `+fast+`\s+(?:tools/)?call`); iSlow < 0 || iSlow >= iFast {
		t.Errorf("Frames does not show the request %s (line %d) sent before %s (line %d):\n%s", slow, iSlow, fast, iFast, s)
	}

	// What a FIFO client would have done: both answers swapped.
	tt.keys("o")
	tt.waitFor("the FIFO view", `Lesson 2/13: two calls in flight · FIFO view`,
		`id `+slow+` slow\s+answer of id `+fast+` "fast"\s+WRONG`,
		`id `+fast+` fast\s+answer of id `+slow+` "slow"\s+WRONG`,
		`2 wrong answers`)
	tt.keys("o")
	tt.waitFor("the narration again", `Lesson 2/13: two calls in flight ─`, `!WRONG`)

	tt.keys("Space")
	tt.waitFor("step 3", `Lesson 3/13: both resolved`)

	// The same fixture again, behind sonde tap with a reorder rule: the
	// answers come back c, b, a; matched by order, two go wrong.
	tt.keys("Space")
	tt.waitFor("the reorder step", `Lesson 4/13: answers reversed by sonde tap`,
		`arrived:\s+id \d+ "c", id \d+ "b", id \d+ "a"`,
		`by id:\s+a ← "a", b ← "b", c ← "c"`,
		`by order: a ← "c" WRONG, b ← "b", c ← "a" WRONG \(2 wrong\)`)

	// A call that times out after 1s; the server answers it anyway at 2.5s.
	tt.keys("Space")
	s = tt.waitFor("the late call", `Lesson 5/13: a timeout, then a late answer`, `id \d+ has a 1s timeout`)
	late := submatch(t, s, `id (\d+) has a 1s timeout`)
	tt.waitFor("the late answer", `late call: timeout after `,
		`->\s+\S*/cancelled`, `fixture: cancelled id=`+late+` `,
		`<- `+late+`\s+response\s+late\b`)

	// A long call, cancelled by the lesson.
	tt.keys("Space")
	s = tt.waitFor("the long call", `Lesson 6/13: a long call`, `id \d+ asks the server to wait`)
	long := submatch(t, s, `id (\d+) asks the server to wait`)
	tt.waitFor("the long call pending", `^│\s*`+long+`\s+(?:tools/)?call(?: \S+)?\s+sent\s`)
	// A FIFO client gave up on the late call and hands its answer to the
	// next request sent: the long call gets it, wrongly.
	tt.keys("o")
	tt.waitFor("the FIFO view going wrong", `Lesson 6/13: a long call · FIFO view`,
		`id `+late+` late\s+gave up, no answer`, `id `+long+` long\s+answer of id `+late+` "too late"\s+WRONG`)
	tt.keys("o")
	tt.waitFor("the narration again", `Lesson 6/13: a long call ─`)
	tt.keys("Space")
	tt.waitFor("the cancel", `Lesson 7/13: cancelled`, `id `+long+`: cancelled after `,
		`fixture: cancelled id=`+long+` `)

	// A server request (legacy, this session) beside an input_required
	// retry (modern, a second fixture started with --era modern).
	tt.keys("Space")
	tt.waitFor("the explanation first", `Lesson 8/13: the server asks you`, `Press space to call confirm\.`)
	tt.keys("Space")
	s = tt.waitFor("the eras step", `Lesson 9/13: a server request, then input_required`, `id \d+ called confirm`)
	confirm := submatch(t, s, `id (\d+) called confirm`)
	// The legacy server's request opens the elicitation dialog; the lesson's
	// user ticks confirm and accepts.
	tt.waitFor("the elicitation dialog", `Elicitation request from the server · id "confirm-1"`, `Proceed\?`, `› confirm\*\s+\[ \] false`)
	// Space is the dialog's while it is open, as its footer says: it
	// ticks confirm and leaves the lesson at its step.
	tt.waitFor("the dialog's footer", `space toggle`)
	tt.keys("Space")
	tt.waitFor("confirm ticked", `› confirm\*\s+\[x\] true`, `Lesson 9/13: a server request`)
	tt.keys("C-s")
	tt.waitFor("the legacy answer", `!Elicitation request from the server`,
		`fixture: confirm: sending elicitation/create id="confirm-1"`,
		`<- `+confirm+`\s+response\s+resolved`)
	tt.keys("z") // zoom the lesson: the whole narration and the modern transcript
	tt.waitFor("the modern transcript", `The tool says: confirmed\s`,
		`-> id 2 tools/call confirm\s+│`, `<- id 2 input required for id 2 \(confirm: elicitation/create\)`,
		`-> id 3 tools/call confirm, retry of id 2 with inputResponses and requestState`, `<- id 3 resolved id 3 after \S+: "confirmed"`)
	tt.keys("z")
	tt.waitFor("the panes again", `─ 1 Pending `)

	// Two answers held by a breakpoint; the learner lets the second go
	// first, and each settles its own id.
	tt.keys("Space")
	tt.waitFor("the hold step's explanation", `Lesson 10/13: hold the answers yourself`, `Press space to send the two calls\.`)
	tt.keys("Space")
	s = tt.waitFor("the held answers", `held frames · 2`,
		`h1\s+<-\s+response\s+\d+\s+\d+s\s+tools/call echo`, `h2\s+<-\s+response\s+\d+\s+\d+s\s+tools/call echo`)
	first := submatch(t, s, `h1\s+<-\s+response\s+(\d+)\s`)
	second := submatch(t, s, `h2\s+<-\s+response\s+(\d+)\s`)
	tt.keys("Down", "f")
	tt.waitFor("the second let go", `held frames · 1`, `› h1\s+<-\s+response\s+`+first+`\s`)
	tt.keys("f")
	s = tt.waitFor("both resolved", `!held frames`, `Lesson 11/13: you hold the answers`, `<- `+first+`\s+response\s+resolved`, `<- `+second+`\s+response\s+resolved`, `first: resolved after \S+\s+second: resolved`)
	if iFirst, iSecond := lineIndex(s, `<- `+first+`\s+response\s+resolved`), lineIndex(s, `<- `+second+`\s+response\s+resolved`); iSecond >= iFirst {
		t.Errorf("Frames shows the answer to %s (line %d) after the one to %s (line %d), want before:\n%s", second, iSecond, first, iFirst, s)
	}

	// The crash: every pending call fails with the exit.
	tt.keys("Space")
	tt.waitFor("the crash", `Lesson 12/13: the server crashes`,
		`a: exited after \S+\s+b: exited after \S+\s+c: exited after `,
		`── pid \d+ exited: exit code 3 `, `─ 4 stderr \S+ · exit code 3 `,
		`fixture: exit-mid-call`, `<-\s+malformed`)

	// The last step restarts the server: a second process, a new handshake.
	tt.keys("Space")
	s = tt.waitFor("the restart", `Lesson 13/13: your turn`,
		`(?s)── pid \d+ started: .*── pid \d+ exited: exit code 3 .*── pid \d+ started: `,
		`stdio pid \d+ │`, `<-\s+malformed(?s:.*)-> 1\s+initialize(?s:.*)<- 2\s+response\s+resolved`)

	tt.quit()
	// Four fixtures ran: the first, the one behind sonde tap of the reorder
	// step and the modern one of the eras step (neither in the stderr pane:
	// their clients are the lesson's), and the restarted one.
	f.AssertStarted(4)
	shown, recorded := startedPIDs(s), f.PIDs()
	if len(shown) != 2 || len(recorded) != 4 || shown[0] != recorded[0] || shown[1] != recorded[3] {
		t.Errorf("stderr pane shows started pids %v, the fixture recorded %v", shown, recorded)
	}
	proctest.AssertGone(t, f.PIDFile)
}

// TestTUIToolCall calls echo from the Tools pane in an 80x24 terminal:
// focus, fuzzy filter, the form, the result, the frames.
func TestTUIToolCall(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 80, 24, f.Cmd(nil))

	// The Tools list (bottom left) shows echo and add; Pending has the focus.
	tools := func(name string) string { return `^│[ ›] ` + name + `\s` }
	tt.waitFor("the handshake", append([]string{
		`─ 1 Pending `, `─ 2 Frames `, `─ 4 stderr `, tools("echo"), tools("add"),
		`^instructions: sonde-fixture is a fault-injecting`, // the server's, until a key

	}, handshake...)...)

	// tab: Frames, tab: Tools (each pane has its own help line).
	tt.keys("Tab")
	tt.waitFor("the focus on Frames", `^enter open frame`)
	tt.keys("Tab")
	tt.waitFor("the focus on Tools", `^enter call`)

	tt.keys("/")
	tt.waitFor("the filter input", `^│/ `, `^enter keep filter`)
	tt.text("ech")
	tt.waitFor("the filtered list", `─ 3 Tools 9 · filter: ech `, `^│/ ech\s+1/9`, tools("echo"), "!"+tools("add"))
	tt.keys("Enter") // keeps the filter, back in the list
	tt.waitFor("the filter kept", `─ 3 Tools 9 · filter: ech `, `^enter call`)
	tt.keys("Enter") // the form of the selected tool
	tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `, `^ctrl\+s call`)
	tt.keys("Tab")
	tt.waitFor("the second field", `^│› ignore_canc`)
	tt.keys("Tab")
	tt.waitFor("the value field", `^│› value\*\s`)
	const value = "hello-tmux-80x24"
	tt.text(value)
	tt.waitFor("the value typed", `^│› value\*\s+`+value+`\s`)
	tt.keys("C-s")

	s := tt.waitFor("the call", `->\s+\d+\s+(?:tools/)?call\s`)
	id := submatch(t, s, `->\s+(\d+)\s+(?:tools/)?call\s`)
	s = tt.waitFor("the result", `echo .*result 1/1`, `^│\[text\]\s`, `^│`+value+`\s+│`,
		`<- `+id+`\s+response\s+resolved`, `pending 0 `)

	tt.quit()
	checkPIDs(t, f, s, 1)
}

// TestTUIFaultyServer runs a server that writes noise on stdout and never
// answers tools/call: the malformed frame is explained, a call stays
// pending until c cancels it, and ctrl+r restarts the server.
func TestTUIFaultyServer(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd(nil, "--fault", "stdout-noise", "--fault", "never-respond"))
	tt.waitFor("the handshake", append([]string{`<-\s+malformed\s`, `^instructions: sonde-fixture is a fault-injecting`}, handshake...)...)

	// The first problem frame, zoomed, opened: why it is malformed.
	tt.keys("2")
	tt.waitFor("the focus on Frames", `^enter open frame`)
	tt.keys("g")
	tt.waitFor("the oldest frame selected", `│>\s*\S+ -> 1\s+initialize`)
	tt.keys("n")
	tt.waitFor("the first problem selected", `│>!\s*\S+ <-\s+malformed`)
	tt.keys("z")
	tt.waitFor("Frames zoomed", `^╭─ 2 Frames `, `!─ 1 Pending `)
	tt.keys("Enter")
	tt.waitFor("the frame's detail",
		`^│malformed\s+line on stdout is not JSON: servers must log to stderr\s`,
		`^│fixture noise: this is not JSON\s`, `^│raw bytes · 31 bytes`)
	tt.keys("Escape")
	tt.waitFor("the frame list", `│>!\s*\S+ <-\s+malformed`, `!raw bytes`)
	tt.keys("z")
	tt.waitFor("Frames unzoomed", `─ 1 Pending `, `─ 2 Frames `)
	tt.keys("G")
	tt.waitFor("follow on", `─ 2 Frames \d+ · follow `)

	// A call from the form that is never answered.
	tt.keys("3")
	tt.waitFor("the focus on Tools", `^enter call`, `^│› echo\s`)
	tt.keys("Enter")
	tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `)
	tt.keys("Tab", "Tab")
	tt.waitFor("the value field", `^│› value\*\s`)
	tt.text("stuck")
	tt.waitFor("the value typed", `^│› value\*\s+stuck\s`)
	tt.keys("C-s")
	s := tt.waitFor("the call in flight", `->\s+\d+\s+(?:tools/)?call\s`)
	id := submatch(t, s, `->\s+(\d+)\s+(?:tools/)?call\s`)
	// The handshake's rows have left Pending (they linger 3s): the call is
	// the only live row, so it is the selected one.
	tt.waitFor("the call alone in Pending", `─ 1 Pending 1 ─`, `^│\s*`+id+`\s+(?:tools/)?call(?: \S+)?\s+sent\s`,
		`fixture: never-respond: not answering tools/call id=`+id+`\s`, `1 calling…`)

	tt.keys("1")
	tt.waitFor("the focus on Pending", `^c cancel request`)
	tt.keys("c")
	tt.waitFor("the cancel", `MCP_ABORTED: tools/call id `+id+`: cancelled`,
		`->\s+\S*/cancelled`, `pending 0 `, `fixture: cancel id=`+id+`:`)
	tt.keys("h")
	tt.waitFor("the cancelled call in the history", `─ 1 Pending 0 · history `, `^│\s*`+id+`\s+(?:tools/)?call(?: \S+)?\s+cancelled\s`)
	tt.keys("h")
	tt.waitFor("the live view", `!· history `)

	// ctrl+r: the server is stopped and a new one started, with its own
	// handshake.
	tt.keys("C-r")
	s = tt.waitFor("the restart",
		`(?s)── pid \d+ started: .*── pid \d+ exited: exit code 0 · stopped by sonde .*── pid \d+ started: `,
		`->\s+\S*/cancelled(?s:.*)-> 1\s+initialize(?s:.*)<- 2\s+response\s+resolved`, `stdio pid \d+ │`)
	if pids := startedPIDs(s); len(pids) != 2 || !strings.Contains(s, "stdio pid "+strconv.Itoa(pids[1])+" │") {
		t.Errorf("after the restart, the status bar does not show the new pid (started: %v):\n%s", pids, s)
	}

	tt.quit()
	checkPIDs(t, f, s, 2)
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTUIHTTP runs the UI against `sonde fixture --http` whose sessions
// expire after two requests: the HTTP exchanges show as rows of Frames (x
// hides them), a call works, the next one meets the expired session, the
// status bar says so, and ctrl+r starts a new session.
func TestTUIHTTP(t *testing.T) {
	base := clitest.FixtureHTTP(t, "--fault", "http-session-expiry", "--session-requests", "2")
	tt := startTUI(t, 120, 40, []string{"--url", base + "/mcp"})
	tt.waitFor("the handshake over HTTP", `sonde-fixture 0\.1\.0`, `─ 3 Tools 9 `, `│ http │`,
		`~> 1\s+POST 200\s`, `<~ 1\s+sse\s`, `<- 2\s+response\s+resolved`,
		`connected to `+regexp.QuoteMeta(base)+`/mcp over HTTP`)

	tt.keys("2")
	tt.waitFor("the focus on Frames", `x\s+show/hide HTTP rows|^enter open frame`)
	tt.keys("x")
	tt.waitFor("the HTTP rows hidden", `─ 2 Frames \d+ · [^─]*no http`, `!~> 1\s+POST 200`)
	tt.keys("x")
	tt.waitFor("the HTTP rows back", `~> 1\s+POST 200\s`)

	call := func(value string) {
		tt.keys("3")
		tt.waitFor("the focus on Tools", `^enter call`)
		tt.keys("Enter")
		tt.waitFor("the form", `call echo · fields`, `^│› delay_ms `)
		tt.keys("Tab", "Tab")
		tt.waitFor("the value field", `^│› value\*\s`)
		tt.keys("C-u") // the form keeps the last call's value
		tt.text(value)
		tt.waitFor("the value typed", `^│› value\*\s+`+value+`\s`)
		tt.keys("C-s")
	}
	call("over-http")
	tt.waitFor("the call's result", `^│over-http\s+│`, `~> 3\s+POST 200\s`)
	tt.keys("Escape")
	call("too-late")
	tt.waitFor("the expired session", `session expired: ctrl\+r starts a new one`, `~> 4\s+POST 404\s`, `MCP_SESSION_EXPIRED`)

	tt.keys("C-r")
	s := tt.waitFor("a new session", `(?s)── connected to .*── connected to `, `─ 3 Tools 9 `, `│ http │ pending 0 `)
	if strings.Contains(s, "session expired: ctrl+r") {
		t.Errorf("the status bar still says the session expired:\n%s", s)
	}
	tt.quit()
}

// TestTUIAnswerSampling: the fixture's server-ping fault sends ping and a
// sampling/createMessage right after the handshake. The UI declares
// sampling, so a dialog opens over the panes; the answer typed there
// reaches the server (its stderr logs it), and the request waited in
// Pending, marked srv, without a deadline.
func TestTUIAnswerSampling(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd(nil, "--fault", "server-ping"))
	tt.waitFor("the dialog", `Sampling request from the server · id 7`, `user: hello from sonde-fixture`,
		`^ctrl\+s send • ctrl\+x refuse`, `srv 7 +sampling/\S* +received`)
	tt.keys("q") // text in the dialog, not quit
	tt.text("uiet answer from tmux")
	tt.waitFor("the answer typed", `quiet answer from tmux`)
	tt.keys("C-s")
	tt.waitFor("the answer at the server",
		`fixture: response id=7 result=\{"role":"assistant"`,
		`!Sampling request from the server`, `srv 7 +sampling/\S* +answered`)
	// The whole width of the zoomed stderr pane shows the text that went out.
	tt.keys("4", "z")
	s := tt.waitFor("the text at the server", `fixture: response id=7 result=\{"role":"assistant","content":\{"type":"text","text":"quiet answer from tmux"`)
	tt.quit()
	checkPIDs(t, f, s, 1)
}

// TestTUIAnswerElicitation calls server-everything's
// trigger-elicitation-request from the Tools pane: the elicitation opens a
// form built from its requestedSchema (defaults filled in, the required
// name enforced), and what is accepted there is what the tool reports.
func TestTUIAnswerElicitation(t *testing.T) {
	argv := clitest.EverythingStdio(t)
	tt := startTUI(t, 120, 40, append([]string{"--kill-after", "500ms"}, argv...))
	// 19 tools: those for roots, sampling, elicitation and tasks are there
	// because the UI declares them (they are registered on initialized,
	// before the UI's tools/list is read).
	tt.waitFor("the handshake", `mcp-servers/everything`, `─ 3 Tools 19 `)
	tt.keys("3", "/")
	tt.text("trigger-elicitation-req")
	tt.waitFor("the filtered list", `^│› trigger-elicitation-request\s`)
	tt.keys("Enter", "Enter") // keeps the filter (back in the list), then the form
	tt.waitFor("the tool's form", `call trigger-elicitation-request`)
	tt.keys("Enter") // no arguments: call
	tt.waitFor("the dialog", `Elicitation request from the server`, `answer elicitation · fields`,
		`› name\*`, `firstLine\s+It was a dark and stormy night\.`, `ctrl\+s accept`)
	tt.keys("C-s")
	tt.waitFor("the required field refused", `✗ required`)
	tt.text("Ada Lovelace")
	tt.keys("C-s")
	tt.waitFor("the result", `!Elicitation request from the server`, `Name: Ada Lovelace`)
	tt.quit()
}

// TestTUIAnswerElicitationTask calls server-everything's
// trigger-elicitation-request-async: its elicitation comes as a task for
// sonde to run (params.task), so the task gets a row in Pending, the
// dialog answers the waiting "task:<taskId>" request, and the server, which
// polls tasks/get, fetches the answer with tasks/result.
func TestTUIAnswerElicitationTask(t *testing.T) {
	argv := clitest.EverythingStdio(t)
	tt := startTUI(t, 140, 40, append([]string{"--kill-after", "500ms"}, argv...))
	tt.waitFor("the handshake", `mcp-servers/everything`, `─ 3 Tools 19 `)
	tt.keys("3", "/") // a filter starts with / only
	tt.text("elicitation-request-async")
	tt.waitFor("the filtered list", `^│› trigger-elicitation-request-async\s`)
	tt.keys("Enter", "Enter") // keeps the filter (back in the list), then the form
	tt.waitFor("the tool's form", `call trigger-elicitation-request-async`)
	tt.keys("Enter") // no arguments: call
	tt.waitFor("the dialog", `Elicitation request from the server · id "task:sonde-1-`, `› name\*`,
		`srv "sonde-1-\S+"\s+task elicitation/c… progress`)
	tt.text("Grace Hopper")
	tt.keys("C-s")
	tt.waitFor("the result", `!Elicitation request from the server`, `\[COMPLETED\] User provided the requested`, `Name: Grace Hopper`)
	tt.quit()
}

// TestTUIURLRequired calls the fixture's url-required tool: its -32042
// answer opens the URL-required dialog (the URL in full, sonde never opens
// it), r sends the same call again, and the retry succeeds.
func TestTUIURLRequired(t *testing.T) {
	f := clitest.NewFixture(t)
	tt := startTUI(t, 120, 40, f.Cmd(nil))
	tt.waitFor("the handshake", handshake...)
	tt.keys("3", "/")
	tt.text("url-req")
	tt.waitFor("the filtered list", `^│› url-required\s`)
	tt.keys("Enter", "Enter") // keeps the filter (back in the list), then the form
	tt.waitFor("the tool's form", `call url-required`)
	tt.keys("C-s")
	tt.waitFor("the dialog", `URL required by sonde-fixture`, `https://example\.com/sonde-fixture/authorize`,
		`sonde does not open URLs`, `^y copy URL • r retry the call • esc close`)
	tt.keys("r")
	s := tt.waitFor("the retry's result", `!URL required by`, `url-required: done; retried after the URL`, `"fixture-url-1"`, `pending 0 `)
	tt.quit()
	checkPIDs(t, f, s, 1)
}

// TestTUIOAuth: a server that answers 401 with --oauth: the authorization
// URL opens in a dialog, with the grant line; visiting it (the test plays the browser: the
// fixture's authorization server grants at once and redirects to sonde's
// loopback listener) lets the flow finish, the dialog closes and the UI
// connects with the token.
func TestTUIOAuth(t *testing.T) {
	base := clitest.FixtureHTTP(t, "--fault", "http-unauthorized")
	tt := startTUI(t, 200, 40, []string{"--url", base + "/mcp", "--oauth"})
	s := tt.waitFor("the authorization dialog", `Authorize sonde \(OAuth\)`, `waits up to 5m0s`, `&state=`, `Grant: authorization code with PKCE`)
	// The URL wraps in full rows of the dialog: read it column-wise.
	var authURL string
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		r := []rune(line)
		col := strings.Index(string(r), "│http://127.0.0.1:")
		if col < 0 {
			continue
		}
		col = len([]rune(string(r)[:col])) + 1
		end := col + strings.IndexRune(string(r[col:]), '│')
		for _, next := range lines[i:] {
			nr := []rune(next)
			if len(nr) < end {
				break
			}
			row := strings.TrimSpace(string(nr[col:end]))
			if row == "" {
				break
			}
			authURL += row
		}
		break
	}
	if !strings.Contains(authURL, "/as/authorize?") || !strings.Contains(authURL, "&state=") {
		t.Fatalf("no authorization URL read from the dialog: %q\n%s", authURL, s)
	}
	resp, err := http.Get(authURL) // follows the redirect to the loopback listener
	if err != nil {
		t.Fatalf("visiting %s: %v", authURL, err)
	}
	resp.Body.Close()
	tt.waitFor("connected with the token", `!Authorize sonde`, `sonde-fixture 0\.1\.0`, `─ 3 Tools 9 `)
	tt.quit()
}
