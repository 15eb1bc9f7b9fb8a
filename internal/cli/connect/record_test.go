package connect_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

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
			f := clitest.NewFixture(t)
			path := filepath.Join(t.TempDir(), "s.jsonl")
			r := clitest.RunSonde(t, tc.stdin, f.Cmd(append(tc.sub, "--record", path))...)
			if r.Code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stderr, "sonde: capture "+path+": ") || !strings.Contains(r.Stderr, " events recorded") {
				t.Errorf("stderr does not report the capture: %q", r.Stderr)
			}
			if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("capture file: %v %v", st, err)
			}
			h, recs := capturetest.Records(t, path)
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
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	const secret = "hunter2-secret"
	args := f.Cmd([]string{"call", "echo", "--args", `{"value":"` + secret + ` sk-abc123"}`, "--record", path, "--env", "API_KEY=" + secret, "--redact", `sk-[a-z0-9]+`})
	r := clitest.RunSonde(t, "", args...)
	if r.Code != 0 || !strings.Contains(r.Stdout, secret) {
		t.Fatalf("exit %d, stdout %q (the secret must reach the server and back)", r.Code, r.Stdout)
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

	f2 := clitest.NewFixture(t)
	r = clitest.RunSonde(t, "", f2.Cmd([]string{"call", "echo", "--record", path})...)
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, "the file exists") {
		t.Errorf("existing file: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", f2.Cmd([]string{"tools", "--record", path + ".2", "--redact", "("})...)
	if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, `--redact "("`) {
		t.Errorf("bad pattern: exit %d, stderr %q", r.Code, r.Stderr)
	}
	f2.AssertStarted(0)
	if _, err := os.Stat(path + ".2"); err == nil {
		t.Error("a capture file was created for a refused command")
	}
}

// TestRecordRedactsEscapedSpellings: a server that spells every letter of
// its strings as a \u escape (fault escaped-strings) echoes a secret in
// bytes that never match it; the capture still holds it only redacted.
func TestRecordRedactsEscapedSpellings(t *testing.T) {
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	const secret = "hunter2-secret"
	args := f.Cmd([]string{"call", "echo", "--args", `{"value":"` + secret + `"}`, "--record", path, "--env", "API_KEY=" + secret}, "--fault", "escaped-strings")
	r := clitest.RunSonde(t, "", args...)
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != secret {
		t.Fatalf("exit %d, stdout %q (the secret must reach the server and back)", r.Code, r.Stdout)
	}
	rd, err := capture.NewReader(bytes.NewReader(mustRead(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	escaped := false
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		escaped = escaped || strings.Contains(rec.Raw, `\u0074\u0065\u0078\u0074`) // "text" spelt by the server
		var v any
		if json.Unmarshal([]byte(rec.Raw), &v) == nil {
			if b, _ := json.Marshal(v); bytes.Contains(b, []byte(secret)) {
				t.Errorf("record %d holds the secret in another spelling: %s", rec.Seq, rec.Raw)
			}
		}
	}
	if !escaped {
		t.Error("no frame spelt with escapes: is the fault on?")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordSurvivesKill9: sonde killed with SIGKILL mid-session leaves a
// capture that reads without error, up to the call in flight.
func TestRecordSurvivesKill9(t *testing.T) {
	f := clitest.NewFixture(t)
	path := filepath.Join(t.TempDir(), "killed.jsonl")
	sub := []string{"call", "echo", "--args", `{"value":"x"}`, "--trace", "--record", path}
	cmd := exec.Command(os.Args[0], f.Cmd(sub, "--fault", "never-respond")...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stderr := clitest.WatchBuffer(clitest.InFlight)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-stderr.Hit():
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
	_, recs := capturetest.Records(t, path)
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
	base := peertest.EverythingHTTP(t, "streamableHttp")
	path := filepath.Join(t.TempDir(), "http.jsonl")
	const apiKey, token = "key-5up3r-secret", "tok-b3arer-secret"
	t.Setenv("SONDE_TEST_TOKEN", token)
	// The server echoes the secrets back: they are on the wire both ways.
	r := clitest.RunSonde(t, "", "call", "echo", "--args", `{"message":"`+apiKey+` `+token+`"}`, "--url", base+"/mcp", "--transport", "streamable",
		"--header", "X-Api-Key: "+apiKey, "--bearer-token-env", "SONDE_TEST_TOKEN", "--record", path)
	if r.Code != 0 || !strings.Contains(r.Stdout, apiKey) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
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
	h, recs := capturetest.Records(t, path)
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
