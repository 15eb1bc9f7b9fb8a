package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// readCapture reads every record of a capture written by sonde, failing on
// any error or warning.
func readCapture(t *testing.T, path string) (capture.Header, []capture.Record) {
	t.Helper()
	return capturetest.Records(t, path)
}

// TestRecordOnEveryCommand: --record writes a readable capture of the
// session, mode 0600, for each headless command, and says so on stderr.
func TestRecordOnEveryCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sub   []string
		stdin string
		tool  string // a tools/call of this tool must be resolved in the capture
	}{
		{"call", []string{"call", "echo", "--args", `{"value":"hi"}`}, "", "echo"},
		{"tools", []string{"tools"}, "", ""},
		{"check", []string{"check"}, "", ""},
		{"script", []string{"script", "-"}, `{"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}` + "\n", ""},
		{"bench", []string{"bench", "echo", "--args", `{"value":"x"}`, "-n", "5"}, "", "echo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			r := runSonde(t, tc.stdin, f.cmd(append(tc.sub, "--record", path))...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "sonde: capture "+path+": ") || !strings.Contains(r.stderr, " events recorded") {
				t.Errorf("stderr does not report the capture: %q", r.stderr)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("capture file: %v %v", st, err)
			}
			h, recs := readCapture(t, path)
			if h.Transport != "stdio" || len(h.Command) == 0 || h.Command[1] != "fixture" {
				t.Errorf("header %+v", h)
			}
			var session, end, resolved bool
			for _, rec := range recs {
				switch {
				case rec.Type == capture.TypeSession && rec.ServerName == "sonde-fixture":
					session = true
				case rec.Type == capture.TypeEnd:
					end = true
				case rec.Type == capture.TypeRequest && rec.State == string(client.StateResolved) && (tc.tool == "" || rec.Tool == tc.tool):
					resolved = true
				}
			}
			if !session || !end || !resolved {
				t.Errorf("capture: session %v, end %v, resolved request %v (%d records)", session, end, resolved, len(recs))
			}
		})
	}
}

// TestRecordRedactsAndRefuses: secrets given with --env and matches of
// --redact never reach the file; an existing file and a bad pattern are
// usage errors reported before any server starts.
func TestRecordRedactsAndRefuses(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	const secret = "hunter2-secret"
	args := f.cmd([]string{"call", "echo", "--args", `{"value":"` + secret + ` sk-abc123"}`, "--record", path, "--env", "API_KEY=" + secret, "--redact", `sk-[a-z0-9]+`})
	r := runSonde(t, "", args...)
	if r.code != 0 || !strings.Contains(r.stdout, secret) {
		t.Fatalf("exit %d, stdout %q (the secret must reach the server and back)", r.code, r.stdout)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{secret, "sk-abc123"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%q reached the capture", s)
		}
	}
	if !bytes.Contains(data, []byte(capture.Redacted)) {
		t.Error("no redaction marker in the capture")
	}

	f2 := newFixture(t)
	r = runSonde(t, "", f2.cmd([]string{"call", "echo", "--record", path})...)
	if r.code != exitUsage || !strings.Contains(r.stderr, "the file exists") {
		t.Errorf("existing file: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runSonde(t, "", f2.cmd([]string{"tools", "--record", path + ".2", "--redact", "("})...)
	if r.code != exitUsage || !strings.Contains(r.stderr, `--redact "("`) {
		t.Errorf("bad pattern: exit %d, stderr %q", r.code, r.stderr)
	}
	f2.assertStarted(0)
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Error("a capture file was created for a refused command")
	}
}

// TestTUIRecord runs the interactive UI with --record in a real terminal:
// the status bar shows the recording, a restart is recorded in the same
// file, and on quit sonde says where the capture went.
func TestTUIRecord(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "tui.jsonl")
	tt := startTUI(t, 120, 40, f.cmd([]string{"--record", path}))
	tt.waitFor("the handshake, recording", append([]string{`^sonde │ ● REC tui\.jsonl │ sonde-fixture`}, handshake...)...)
	tt.keys("C-r")
	s := tt.waitFor("the restart", `(?s)── pid \d+ started: .*── pid \d+ started: `, `● REC tui\.jsonl`)
	if pids := startedPIDs(s); len(pids) == 2 {
		// The second server's handshake is done once the status bar names
		// the server with the new pid.
		s = tt.waitFor("the second handshake", `sonde-fixture 0\.1\.0 │ .*stdio pid `+strconv.Itoa(pids[1])+` │`)
	}
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("sonde exited with status %d%s", code, tt.diag())
	}
	stderr, _ := os.ReadFile(filepath.Join(tt.dir, "stderr"))
	if !strings.HasPrefix(string(stderr), "sonde: capture "+path+": ") || strings.Count(string(stderr), "\n") != 1 {
		t.Errorf("stderr %q, want the capture's summary", stderr)
	}
	_, recs := readCapture(t, path)
	var starts, restarts, sessions int
	for _, r := range recs {
		switch {
		case r.Type == capture.TypeProcess && r.What == "start":
			starts++
		case r.Type == capture.TypeRestart:
			restarts++
		case r.Type == capture.TypeSession:
			sessions++
		}
	}
	if starts != 2 || restarts != 1 || sessions != 2 {
		t.Errorf("capture has %d starts, %d restarts, %d sessions; want 2, 1, 2", starts, restarts, sessions)
	}
	checkPIDs(t, f, s, 2)
}

// TestRecordSurvivesKill9: sonde killed with SIGKILL mid-session leaves a
// capture that reads without error, up to the call in flight.
func TestRecordSurvivesKill9(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(t.TempDir(), "killed.jsonl")
	sub := []string{"call", "echo", "--args", `{"value":"x"}`, "--trace", "--record", path}
	cmd := exec.Command(os.Args[0], f.cmd(sub, "--fault", "never-respond")...)
	cmd.Env = append(os.Environ(), childEnv()...)
	stderr := watchBuffer(inFlight)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-stderr.hit:
	case err := <-waited:
		t.Fatalf("sonde ended before the call was sent: %v\n%s", err, stderr.String())
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-waited
		t.Fatalf("the call was not sent within 20s:\n%s", stderr.String())
	}
	// The trace line is printed when the frame is emitted; the recorder
	// writes it in its own goroutine a moment later.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(`"method":"tools/call","kind":"request"`)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-waited
	_, recs := readCapture(t, path)
	var sent, end bool
	for _, r := range recs {
		sent = sent || (r.Type == capture.TypeFrame && r.Method == "tools/call" && r.Verdict == "sent")
		end = end || r.Type == capture.TypeEnd
	}
	if !sent || end {
		t.Errorf("capture of a killed sonde: tools/call sent %v, end record %v (want true, false)", sent, end)
	}
}

// TestRecordHTTP records a session over Streamable HTTP with the reference
// server: the header names the URL, exchanges are http records, frames name
// their stream, and the header and bearer-token values never reach the file,
// even when the server echoes them in a message.
func TestRecordHTTP(t *testing.T) {
	base := everythingHTTP(t, "streamableHttp")
	path := filepath.Join(t.TempDir(), "http.jsonl")
	const apiKey, token = "key-5up3r-secret", "tok-b3arer-secret"
	t.Setenv("SONDE_TEST_TOKEN", token)
	// The server echoes the secrets back: they are on the wire both ways.
	r := runSonde(t, "", "call", "echo", "--args", `{"message":"`+apiKey+` `+token+`"}`, "--url", base+"/mcp", "--transport", "streamable",
		"--header", "X-Api-Key: "+apiKey, "--bearer-token-env", "SONDE_TEST_TOKEN", "--record", path)
	if r.code != 0 || !strings.Contains(r.stdout, apiKey) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{apiKey, token} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%q reached the capture", s)
		}
	}
	h, recs := readCapture(t, path)
	if h.Transport != "http" || h.URL != base+"/mcp" || len(h.Command) != 0 {
		t.Errorf("header %+v", h)
	}
	var exchanges, streamed int
	for _, rec := range recs {
		ev, ok, err := h.Event(rec)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Type == capture.TypeHTTP:
			if !ok || ev.Kind != client.EvHTTP || ev.HTTP.Method != rec.HTTP.Method || ev.HTTP.Status != rec.HTTP.Status {
				t.Errorf("http record %+v read back as %+v", rec.HTTP, ev.HTTP)
			}
			if rec.HTTP.Method == "POST" && rec.HTTP.Status == 200 {
				exchanges++
			}
		case rec.Type == capture.TypeFrame && rec.Stream != "":
			if ev.Frame.Stream != rec.Stream {
				t.Errorf("frame stream %q read back as %q", rec.Stream, ev.Frame.Stream)
			}
			streamed++
		}
	}
	if exchanges == 0 || streamed == 0 {
		t.Errorf("%d successful POST exchanges and %d frames with a stream in the capture", exchanges, streamed)
	}
}
