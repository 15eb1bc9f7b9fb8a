package tap_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/replay"
)

const (
	initLine    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	bigBytes    = 20 << 20
)

func echoCall(id int, value string, delayMS int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"value":%q,"delay_ms":%d}}}`, id, value, delayMS)
}

// session plays a fixed request stream as a host would: the handshake;
// three concurrent calls whose delays fix the order of their answers
// (0, 300 and 700 ms); then, with big, a call answered by 20 MiB on one
// line; then the end of stdin. Each step waits for the answers of the
// last, so the server's output is the same bytes every run.
func session(h *host, big bool) {
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.write(initialized, echoCall(2, "slow", 700), echoCall(3, "fast", 0), echoCall(4, "mid", 300))
	h.await(`{"value":"slow"}`, 2) // each answer comes twice (duplicate-response)
	if big {
		h.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"big","arguments":{"bytes":%d}}}`, bigBytes))
		h.await(`"}]}}`, 2)
	}
	h.stdin.Close()
}

// TestTapForwardsEveryByte: the same request stream, to the fixture with
// stdout-noise, duplicate-response and non-object-json and a 20 MiB line,
// then with string-id, duplicate-response, stdout-noise and CRLF line
// ends, gives the host exactly the bytes the fixture writes when run
// directly (sha256 of stdout both ways); the tap exits with the server's
// status, leaves no process behind (the fixture's pid file), and its
// recording reads back as a capture that flags each fault, which sonde
// lint, stats and replay read.
func TestTapForwardsEveryByte(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		big    bool
		frames map[string]int // what checkRecording counts
		lint   []string
	}{
		{"noise, duplicates, non-object JSON, a 20 MiB line",
			[]string{"--fault", "stdout-noise,duplicate-response,non-object-json"}, true,
			// 4 calls (3 echo, 1 big) each answered twice; noise before
			// every answer, the initialize result included; the big
			// answers are too long to decode.
			map[string]int{"out sent": 6, "in resolved": 4, "in duplicate": 3, "noise": 9, "non-object": 4, "too long": 2},
			[]string{"duplicate-response", "not-json", "not-object"}},
		{"string ids, duplicates, CRLF",
			[]string{"--fault", "string-id,duplicate-response,stdout-noise", "--crlf"}, false,
			map[string]int{"out sent": 5, "in resolved": 1, "in duplicate": 0, "noise": 7, "string id": 6, "crlf kept": 1},
			[]string{"unknown-id", "not-json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := clitest.NewFixture(t)
			direct := startHost(t, nil, fx.Argv(tc.args...)...)
			session(direct, tc.big)
			if code := direct.wait(); code != 0 {
				t.Fatalf("fixture direct: exit %d\n%s", code, direct.stderr())
			}
			want := direct.stdout()

			rec := filepath.Join(t.TempDir(), "s.jsonl")
			tapped := startHost(t, nil, append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv(tc.args...)...)...)
			session(tapped, tc.big)
			if code := tapped.wait(); code != 0 {
				t.Fatalf("tap: exit %d\n%s", code, tapped.stderr())
			}
			got := tapped.stdout()
			if sha256.Sum256(got) != sha256.Sum256(want) {
				t.Fatalf("through the tap: %d bytes, sha256 %x; direct: %d bytes, sha256 %x\ntap:\n%.1500s\ndirect:\n%.1500s",
					len(got), sha256.Sum256(got), len(want), sha256.Sum256(want), got, want)
			}
			if strings.Contains(tapped.stderr(), "sonde") {
				t.Errorf("the tap wrote on stderr:\n%s", tapped.stderr())
			}
			checkRecording(t, readCapture(t, rec), tc.frames)

			// With a breakpoint that matches nothing (every line judged,
			// in the sessions folder where the socket is), the same bytes.
			home := t.TempDir()
			broken := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", "exact", "--break", "method:nothing/here", "--"}, fx.Argv(tc.args...)...)...)
			session(broken, tc.big)
			if code := broken.wait(); code != 0 {
				t.Fatalf("tap --break: exit %d\n%s", code, broken.stderr())
			}
			if got := broken.stdout(); sha256.Sum256(got) != sha256.Sum256(want) {
				t.Fatalf("through the tap with a breakpoint: %d bytes, sha256 %x; direct: %d bytes, sha256 %x", len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
			}
			if tl, err := replay.Open(rec, 3*time.Second); err != nil || tl.Len() == 0 {
				t.Errorf("replay.Open: %v", err)
			}
			r := clitest.RunSonde(t, "", "lint", rec)
			for _, rule := range tc.lint {
				if r.Code != 1 || !strings.Contains(r.Stdout, " "+rule+"\n") {
					t.Errorf("sonde lint: exit %d, no %s\n%s%s", r.Code, rule, r.Stdout, r.Stderr)
				}
			}
			if r := clitest.RunSonde(t, "", "stats", "--json", rec); r.Code != 0 || !strings.Contains(r.Stdout, `"tool":"echo"`) {
				t.Errorf("sonde stats: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
}

// checkRecording: the capture has every fault, flagged, the server's exit
// and a clean end. A count may fall short only where a missed record says
// observation fell behind.
func checkRecording(t *testing.T, recs []capture.Record, want map[string]int) {
	t.Helper()
	count := map[string]int{}
	var exit *capture.ExitRec
	var missed uint64
	for _, r := range recs {
		switch r.Type {
		case capture.TypeFrame:
			count[r.Dir+" "+r.Verdict]++
			switch {
			case r.Verdict == "malformed" && strings.TrimSuffix(r.Raw, "\r") == "fixture noise: this is not JSON":
				count["noise"]++
			case r.Verdict == "malformed" && strings.HasPrefix(r.Raw, "[1,2,3]"):
				count["non-object"]++
			case r.Verdict == "unknown" && strings.Contains(r.Detail, "is a string; the host sent the integer"):
				count["string id"]++
			case r.Verdict == "too-long":
				count["too long"]++
			case r.Verdict == "resolved" && strings.HasSuffix(r.Raw, "\r"):
				count["crlf kept"]++
			}
		case capture.TypeProcess:
			if r.What == "exit" {
				exit = r.Exit
			}
		case capture.TypeMissed:
			missed += r.Count
		}
	}
	for k, n := range want {
		if count[k] != n && !(missed > 0 && count[k] < n) {
			t.Errorf("%s: %d frames, want %d (all: %v; missed %d)", k, count[k], n, count, missed)
		}
	}
	if exit == nil || exit.Code != 0 {
		t.Errorf("exit record %+v, want code 0", exit)
	}
	if recs[len(recs)-1].Type != capture.TypeEnd {
		t.Errorf("last record %q, want end", recs[len(recs)-1].Type)
	}
}

// TestTapExitStatus: the tap's exit status is the server's: the crash
// tool's exit code 3; 128+15 when SIGTERM sent to the tap ended the
// server; 0 when the host's end of stdin ended it. No process is left.
func TestTapExitStatus(t *testing.T) {
	t.Run("crash", func(t *testing.T) {
		fx := clitest.NewFixture(t)
		rec := filepath.Join(t.TempDir(), "s.jsonl")
		h := startHost(t, nil, append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv()...)...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		h.write(initialized, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
		if code := h.wait(); code != 3 {
			t.Errorf("exit %d, want 3\n%s", code, h.stderr())
		}
		h.stdin.Close()
		var exited, cut bool
		for _, r := range readCapture(t, rec) {
			exited = exited || r.Type == capture.TypeRequest && r.State == "exited" && r.Method == "tools/call"
			cut = cut || r.Type == capture.TypeFrame && r.Verdict == "malformed" && strings.Contains(r.Detail, "incomplete line")
		}
		if !exited || !cut {
			t.Errorf("recording: tools/call exited %v, cut line %v", exited, cut)
		}
	})
	t.Run("SIGTERM to the tap", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no signals to send on Windows (the tap passes on console events: README)")
		}
		fx := clitest.NewFixture(t)
		rec := filepath.Join(t.TempDir(), "s.jsonl")
		h := startHost(t, nil, append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv()...)...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := h.wait(); code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit %d, want %d\n%s", code, 128+int(syscall.SIGTERM), h.stderr())
		}
		h.stdin.Close()
		var sent, ended bool
		for _, r := range readCapture(t, rec) {
			sent = sent || r.Type == capture.TypeProcess && r.What == "signal" && r.Signal == "SIGTERM"
			ended = ended || r.Type == capture.TypeProcess && r.What == "exit" && r.Exit.Signal == "SIGTERM"
		}
		if !sent || !ended {
			t.Errorf("recording: signal passed on %v, server ended by SIGTERM %v", sent, ended)
		}
	})
	t.Run("host EOF", func(t *testing.T) {
		fx := clitest.NewFixture(t)
		h := startHost(t, nil, append([]string{os.Args[0], "tap", "--no-record", "--"}, fx.Argv()...)...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		h.stdin.Close()
		if code := h.wait(); code != 0 {
			t.Errorf("exit %d, want 0\n%s", code, h.stderr())
		}
	})
}

// TestTapUnwritableSessions: when the sessions folder cannot be made, the
// tap still forwards, and says once on stderr why it is not recording.
func TestTapUnwritableSessions(t *testing.T) {
	fx := clitest.NewFixture(t)
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"under a file": blocker}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		cases["read-only"] = ro
	}
	for name, home := range cases {
		t.Run(name, func(t *testing.T) {
			h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--"}, fx.Argv()...)...)
			h.write(initLine)
			h.await(`"serverInfo"`, 1)
			h.stdin.Close()
			if code := h.wait(); code != 0 {
				t.Errorf("exit %d", code)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(h.stderr()), "\n") {
				if strings.HasPrefix(l, "sonde") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "sonde tap: not recording: sessions folder "+home) {
				t.Errorf("stderr lines from sonde: %q", lines)
			}
		})
	}
}

// TestTapSessionsFolder: without --record the session goes to a new file
// in $SONDE_HOME/sessions, named after the label, folder 0700 and file
// 0600.
func TestTapSessionsFolder(t *testing.T) {
	fx := clitest.NewFixture(t)
	home := t.TempDir()
	h := startHost(t, []string{"SONDE_HOME=" + home}, append([]string{os.Args[0], "tap", "--label", "my server", "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, h.stderr())
	}
	dir := filepath.Join(home, "sessions")
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("sessions folder: %v %v", st, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "my_server-*-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	if st, _ := os.Stat(files[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("session file mode %v", st.Mode())
	}
	var resolved bool
	for _, r := range readCapture(t, files[0]) {
		resolved = resolved || r.Type == capture.TypeSession && r.ServerName == "sonde-fixture"
	}
	if !resolved {
		t.Errorf("no session record in %s", files[0])
	}
}

// TestTapSpawnFailure: a server that cannot start is MCP_SPAWN (exit 7),
// recorded as such.
func TestTapSpawnFailure(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	r := clitest.RunSonde(t, "", "tap", "--record", rec, "--", "/nonexistent/sonde-test-server")
	clitest.CheckRun(t, r, 7, `sonde: MCP_SPAWN: cannot start "/nonexistent/sonde-test-server": executable not found (check the path or PATH)`+"\n")
	var failed bool
	for _, x := range readCapture(t, rec) {
		failed = failed || x.Type == capture.TypeProcess && x.What == "spawn-failed"
	}
	if !failed {
		t.Error("no spawn-failed record")
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "tap"), 2, "sonde: tap needs the server command after -- (sonde tap [--label NAME] -- COMMAND [ARG...])\n")
}

// TestTapInProcess runs the tap inside the test (goroutines checked by
// goleak at the end): the host's lines in, the fixture's answers out, the
// recording closed.
func TestTapInProcess(t *testing.T) {
	fx := clitest.NewFixture(t)
	for _, kv := range clitest.ChildEnv() { // the server gets the tap's environment
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	in := initLine + "\n" + initialized + "\n" + echoCall(2, "hi", 0) + "\n"
	r := clitest.RunSonde(t, in, append([]string{"tap", "--record", rec, "--"}, fx.Argv()...)...)
	if r.Code != 0 || !strings.Contains(r.Stdout, `{"value":"hi"}`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	recs := readCapture(t, rec)
	if last := recs[len(recs)-1]; last.Type != capture.TypeEnd || last.Missed != 0 {
		t.Errorf("last record %+v", last)
	}
}

// TestTapForwardsStderr: the server's stderr (a flood of multi-byte
// UTF-8 lines) reaches the host's stderr byte for byte, and the recording
// holds all of it.
func TestTapForwardsStderr(t *testing.T) {
	const n = 4 << 20
	args := []string{"--fault", "stderr-flood", "--stderr-flood-bytes", strconv.Itoa(n)}
	fx := clitest.NewFixture(t)
	run := func(argv []string) string {
		h := startHost(t, nil, argv...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		h.awaitStderr(n)
		h.stdin.Close()
		if code := h.wait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return h.stderr()
	}
	want := run(fx.Argv(args...))
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	got := run(append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv(args...)...))
	if sha256.Sum256([]byte(got)) != sha256.Sum256([]byte(want)) {
		t.Fatalf("stderr through the tap: %d bytes; direct: %d bytes", len(got), len(want))
	}
	var recorded strings.Builder
	var missed bool
	for _, r := range readCapture(t, rec) {
		missed = missed || r.Type == capture.TypeMissed
		if r.Type == capture.TypeStderr {
			b, err := r.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			recorded.Write(b)
		}
	}
	// Observation may fall behind on a loaded machine (a missed record
	// then says so); otherwise the recording has every byte.
	if !missed && recorded.String() != want || recorded.Len() > len(want) {
		t.Errorf("recorded stderr: %d bytes, want the %d forwarded", recorded.Len(), len(want))
	}
}

// TestTapHostStopsReading: a host that closes its end of the tap's stdout
// does not kill the tap (SIGPIPE is caught): the server's next write
// fails as it would have, and the tap still ends with the server's status
// when stdin ends, leaving nothing behind.
func TestTapHostStopsReading(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGPIPE is Unix's")
	}
	fx := clitest.NewFixture(t)
	cmd := exec.Command(os.Args[0], append([]string{"tap", "--no-record", "--"}, fx.Argv()...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, initLine+"\n")
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the host is gone
	io.WriteString(stdin, initialized+"\n"+echoCall(2, "into the void", 0)+"\n")
	time.Sleep(200 * time.Millisecond)
	stdin.Close()
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the tap was killed by %v", ws.Signal())
	}
	t.Logf("tap: %v", err)
}

// TestTapRedactsHostSecrets: a host's config gives the server a token in
// its environment, and the server echoes it; the host gets it back as
// sent, the recording only «redacted».
func TestTapRedactsHostSecrets(t *testing.T) {
	const token = "ghp_s3cretT0ken42"
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	h := startHost(t, []string{"GITHUB_PERSONAL_ACCESS_TOKEN=" + token}, append([]string{os.Args[0], "tap", "--record", rec, "--"}, fx.Argv()...)...)
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	h.write(initialized, echoCall(2, token, 0))
	h.await(token, 1)
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, h.stderr())
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(token)) || !bytes.Contains(data, []byte(capture.Redacted)) {
		t.Errorf("the recording holds the token, or no redaction:\n%s", data)
	}
}
