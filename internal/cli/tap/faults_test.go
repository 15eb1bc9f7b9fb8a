package tap_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// tapFaults starts a host stand-in on sonde tap --record REC with rules
// in front of the fixture (with fixtureArgs), and returns it and REC.
func tapFaults(t *testing.T, rules []string, fixtureArgs ...string) (*host, string) {
	t.Helper()
	fx := clitest.NewFixture(t)
	rec := filepath.Join(t.TempDir(), "s.jsonl")
	argv := []string{os.Args[0], "tap", "--record", rec}
	for _, r := range rules {
		argv = append(argv, "--fault", r)
	}
	h := startHost(t, nil, append(append(argv, "--"), fx.Argv(fixtureArgs...)...)...)
	return h, rec
}

// notes are the notes of a recording.
func notes(t *testing.T, rec string) string {
	var b strings.Builder
	for _, r := range readCapture(t, rec) {
		if r.Type == capture.TypeNote {
			b.WriteString(r.Note + "\n")
		}
	}
	return b.String()
}

// TestFaultUnmatchedByteExact: with rules that match nothing, the host
// gets exactly the bytes the fixture writes directly (noise, duplicate
// answers, non-object JSON, CRLF, and a 20 MiB line, longer than the cap
// on what the rules hold, which passes in pieces), as without rules.
func TestFaultUnmatchedByteExact(t *testing.T) {
	rules := []string{"drop:to-host,method=nothing/here", "delay:to-server,tool=nope,ms=5000", "corrupt:id=999,how=truncate", "error:to-server,method=nope"}
	args := []string{"--fault", "stdout-noise,duplicate-response,non-object-json", "--crlf"}
	fx := clitest.NewFixture(t)
	direct := startHost(t, nil, fx.Argv(args...)...)
	session(direct, true)
	if code := direct.wait(); code != 0 {
		t.Fatalf("fixture direct: exit %d\n%s", code, direct.stderr())
	}
	want := direct.stdout()

	tapped, rec := tapFaults(t, rules, args...)
	session(tapped, true)
	if code := tapped.wait(); code != 0 {
		t.Fatalf("tap: exit %d\n%s", code, tapped.stderr())
	}
	got := tapped.stdout()
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Fatalf("through the tap with rules: %d bytes, sha256 %x; direct: %d bytes, sha256 %x", len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
	}
	if n := notes(t, rec); strings.Contains(n, ") ") && regexp.MustCompile(`fault rule \d+ \(`).MatchString(n) {
		t.Errorf("a rule fired:\n%s", n)
	}
}

// TestFaultActions: each action against the fixture, as the host sees it,
// and the note that marks it in the recording.
func TestFaultActions(t *testing.T) {
	handshake := func(h *host) {
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		h.write(initialized)
	}
	for _, tc := range []struct {
		name, rule string
		run        func(t *testing.T, h *host)
		note       string
		lint       string
	}{
		{"drop", "drop:to-host,tool=echo,id=3", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0), echoCall(3, "b", 0), echoCall(4, "c", 400))
			h.await(`{"value":"c"}`, 1)
			h.stdin.Close()
			if h.wait(); strings.Contains(h.stdoutText(), `"id":3`) {
				t.Errorf("the dropped answer reached the host:\n%s", h.stdoutText())
			}
		}, "dropped the response to id 3 (tools/call echo) to-host", ""},
		{"duplicate", "duplicate:to-host,tool=echo,n=2", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			h.await(`{"value":"a"}`, 3)
		}, "sent the response to id 2 (tools/call echo) to-host 2 more time(s)", "duplicate-response"},
		{"corrupt string-id", "corrupt:to-host,tool=echo,how=string-id", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			h.await(`{"jsonrpc":"2.0","id":"2","result"`, 1)
		}, `id 2 became the string "2"`, "unknown-id"},
		{"corrupt break-json", "corrupt:to-host,kind=response,tool=echo,how=break-json", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			h.await(`{"value":"a"}},}`, 1)
		}, "a trailing comma before the closing brace", "not-json"},
		{"error", "error:to-server,tool=echo,code=-32001,message=boom", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
			h.await(`{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"boom"}}`+"\n", 1)
			h.await(`"id":3`, 1)
			h.stdin.Close()
			// The server never saw the call: it would have answered it.
			if h.wait(); strings.Contains(h.stdoutText(), `"value":"a"`) || strings.Count(h.stdoutText(), `"id":2`) != 1 {
				t.Errorf("the server answered the call the rule answered:\n%s", h.stdoutText())
			}
		}, `answered the request id 2 (tools/call echo) with error -32001 "boom" instead of forwarding it to-server`, ""},
		{"delay", "delay:to-host,tool=echo,ms=700", func(t *testing.T, h *host) {
			start := time.Now()
			h.write(echoCall(2, "a", 0))
			h.await(`{"value":"a"}`, 1)
			if d := time.Since(start); d < 700*time.Millisecond {
				t.Errorf("answered after %v, want ≥ 700ms", d)
			}
		}, "delayed the response to id 2 (tools/call echo) to-host by 700ms", ""},
		{"noise", "noise:to-host,kind=response,tool=echo,text=chaos noise here", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			h.await("chaos noise here\n{\"jsonrpc\":\"2.0\",\"id\":2,", 1)
		}, "wrote a noise line to the host", "not-json"},
		{"reorder", "reorder:to-host,tool=echo,window=3", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0), echoCall(3, "b", 150), echoCall(4, "c", 300))
			h.await(`{"value":"a"}`, 1)
			out := h.stdoutText()
			if !(strings.Index(out, `"value":"c"`) < strings.Index(out, `"value":"b"`) && strings.Index(out, `"value":"b"`) < strings.Index(out, `"value":"a"`)) {
				t.Errorf("want the answers c, b, a:\n%s", out)
			}
		}, "released 3 held frame(s) to-host, reversed", ""},
		{"reorder on time", "reorder:to-host,tool=echo,window=10,ms=400", func(t *testing.T, h *host) {
			start := time.Now()
			h.write(echoCall(2, "a", 0), echoCall(3, "b", 100))
			h.await(`{"value":"a"}`, 1)
			out := h.stdoutText()
			if d := time.Since(start); d < 400*time.Millisecond || strings.Index(out, `"value":"b"`) > strings.Index(out, `"value":"a"`) {
				t.Errorf("after %v, want b then a after 400ms:\n%s", d, out)
			}
		}, "released 2 held frame(s) to-host, reversed", ""},
		{"stall", "stall:to-host,tool=echo,ms=600", func(t *testing.T, h *host) {
			// Either answer may come first: the rule stalls after whichever.
			h.write(echoCall(2, "a", 0), echoCall(3, "b", 0))
			h.await(`"result":{"content"`, 1)
			first := time.Now()
			h.await(`"result":{"content"`, 2)
			if d := time.Since(first); d < 500*time.Millisecond {
				t.Errorf("the second answer came %v after the first, want ≥ 600ms", d)
			}
		}, "stalled to-host for 600ms after the response to id ", ""},
		{"close to-host", "close:to-host,tool=echo", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			time.Sleep(300 * time.Millisecond)
			h.write(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
			time.Sleep(200 * time.Millisecond)
			h.stdin.Close()
			if h.wait(); strings.Contains(h.stdoutText(), `"value":"a"`) || strings.Contains(h.stdoutText(), `"id":9`) {
				t.Errorf("the host got frames after the close:\n%s", h.stdoutText())
			}
		}, "closed the host's stdout instead of forwarding the response to id 2 (tools/call echo) to-host", ""},
		{"close to-server", "close:to-server,tool=echo", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			// The server sees the end of its stdin and exits: so does
			// the tap, though the host's stdin is still open.
			if code := h.wait(); code != 0 || strings.Contains(h.stdoutText(), `"value":"a"`) {
				t.Errorf("exit %d:\n%s", code, h.stdoutText())
			}
		}, "closed the server's stdin instead of forwarding the request id 2 (tools/call echo) to-server", ""},
		{"stderr", "stderr:to-server,method=tools/call,text=chaos on stderr", func(t *testing.T, h *host) {
			h.write(echoCall(2, "a", 0))
			h.await(`{"value":"a"}`, 1)
			h.awaitStderr(len("chaos on stderr\n"))
			if !strings.Contains(h.stderr(), "chaos on stderr\n") {
				t.Errorf("stderr: %q", h.stderr())
			}
		}, "wrote to the host's stderr", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, rec := tapFaults(t, []string{tc.rule})
			handshake(h)
			tc.run(t, h)
			h.stdin.Close()
			if code := h.wait(); code != 0 {
				t.Fatalf("exit %d\n%s", code, h.stderr())
			}
			want := fmt.Sprintf("fault rule 1 (%s) ", tc.rule)
			if n := notes(t, rec); !strings.Contains(n, want) || !strings.Contains(n, tc.note) {
				t.Errorf("notes:\n%s\nwant %q … %q", n, want, tc.note)
			}
			// The note carries what the rule did as fields (1.4).
			action, _, _ := strings.Cut(tc.rule, ":")
			marked := 0
			for _, r := range readCapture(t, rec) {
				if r.Type == capture.TypeNote && strings.Contains(r.Note, tc.note) {
					if r.Fault == nil || r.Fault.Rule != 1 || string(r.Fault.Action) != action {
						t.Errorf("note %q: fault %+v", r.Note, r.Fault)
					}
					marked++
				}
			}
			if marked == 0 {
				t.Error("no fault record")
			}
			if tc.lint != "" {
				r := clitest.RunSonde(t, "", "lint", rec)
				if r.Code != 1 || !strings.Contains(r.Stdout, " "+tc.lint+"\n") || !strings.Contains(r.Stdout, "  injected: "+want) {
					t.Errorf("sonde lint: exit %d, want %s marked injected\n%s%s", r.Code, tc.lint, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// TestFaultSeed: a p= rule draws the same with the same --seed: the same
// calls are dropped on their way to the server, so the same are answered.
func TestFaultSeed(t *testing.T) {
	answered := func(seed string) string {
		fx := clitest.NewFixture(t)
		h := startHost(t, nil, append([]string{os.Args[0], "tap", "--no-record", "--seed", seed, "--fault", "drop:to-server,tool=echo,p=0.5", "--"}, fx.Argv()...)...)
		h.write(initLine)
		h.await(`"serverInfo"`, 1)
		calls := []string{initialized}
		for i := 2; i < 32; i++ {
			calls = append(calls, echoCall(i, fmt.Sprint("v", i), 0))
		}
		h.write(calls...)
		time.Sleep(300 * time.Millisecond)
		h.stdin.Close()
		h.wait()
		var ids []string
		for i := 2; i < 32; i++ {
			if strings.Contains(h.stdoutText(), fmt.Sprintf(`"id":%d,`, i)) {
				ids = append(ids, fmt.Sprint(i))
			}
		}
		return strings.Join(ids, " ")
	}
	a, b, c := answered("7"), answered("7"), answered("8")
	if a != b {
		t.Errorf("--seed 7 answered %q, then %q", a, b)
	}
	if a == c {
		t.Errorf("--seed 7 and --seed 8 answered the same: %q", a)
	}
	if n := len(strings.Fields(a)); n < 5 || n > 25 {
		t.Errorf("p=0.5 let %d of 30 through", n)
	}
}

// TestFaultBadRule: a rule that cannot be parsed is a usage error naming
// it, the character and what is wrong; so is one in a --faults file.
func TestFaultBadRule(t *testing.T) {
	r := clitest.RunSonde(t, "", "tap", "--fault", "noise:to-host", "--fault", "delay:to-host,ms=fast", "--", "true")
	if r.Code != 2 || !strings.Contains(r.Stderr, `fault rule "delay:to-host,ms=fast": at character 18: ms="fast"`) {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
	file := filepath.Join(t.TempDir(), "rules")
	clitest.WriteTestFile(t, file, "# answers\ndrop:to-host,kind=response\n\nduplicate:to-host,n=zero\n")
	r = clitest.RunSonde(t, "", "tap", "--faults", file, "--", "true")
	if r.Code != 2 || !strings.Contains(r.Stderr, file+`:4: fault rule "duplicate:to-host,n=zero": at character 21`) {
		t.Errorf("exit %d\n%s", r.Code, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "tap", "--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1/mcp", "--fault", "delay:to-host,ms=fast")
	if r.Code != 2 || !strings.Contains(r.Stderr, `fault rule "delay:to-host,ms=fast": at character 18`) {
		t.Errorf("--listen --fault: exit %d\n%s", r.Code, r.Stderr)
	}
}
