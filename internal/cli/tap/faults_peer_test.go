package tap_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// TestFaultGoSDKClient: the official Go SDK's client as the host. An error
// rule's answer reaches it as the tool call's error, from the fixture and
// from server-everything; answers sent twice are ignored by it (the calls
// still succeed, with the same result as without the rule).
func TestFaultGoSDKClient(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	run := func(server []string, tool, args string, rules ...string) (string, string, error) {
		argv := []string{"-n", "3", "-c", "1", "-tool", tool, "-args", args, "-terminate", "500ms", "--", os.Args[0], "tap", "--no-record"}
		for _, r := range rules {
			argv = append(argv, "--fault", r)
		}
		cmd := exec.Command(bin, append(append(argv, "--"), server...)...)
		cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return string(out), stderr.String(), err
	}
	for _, tc := range echoServers {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.argv(t)
			_, stderr, err := run(server, tc.tool, tc.args, "error:to-server,tool=echo,code=-32001,message=boom from the tap")
			if err == nil || !strings.Contains(stderr, "boom from the tap") {
				t.Errorf("error rule: %v\n%s", err, stderr)
			}
			want, stderr, err := run(server, tc.tool, tc.args)
			if err != nil {
				t.Fatalf("no rule: %v\n%s", err, stderr)
			}
			got, stderr, err := run(server, tc.tool, tc.args, "duplicate:to-host,kind=response,tool=echo")
			if err != nil || gosdkResult(t, got) != gosdkResult(t, want) {
				t.Errorf("duplicate rule: %v\n%s\ngot %s\nwant %s", err, stderr, got, want)
			}
		})
	}
}

// gosdkResult is the result in the Go SDK client's report.
func gosdkResult(t *testing.T, report string) string {
	t.Helper()
	var r gosdkReport
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("report %q: %v", report, err)
	}
	return string(r.Result)
}

// TestFaultEverything: the actions against the reference server
// (server-everything), as a host stand-in sees them.
func TestFaultEverything(t *testing.T) {
	server := peertest.Everything(t)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, id, id)
	}
	for _, tc := range []struct {
		rule  string
		check func(h *host) bool
	}{
		{"drop:to-host,tool=echo,id=2", func(h *host) bool {
			h.await(`m3`, 1)
			time.Sleep(200 * time.Millisecond)
			return !strings.Contains(h.stdoutText(), `"id":2,`)
		}},
		{"duplicate:to-host,tool=echo,id=2", func(h *host) bool { h.await(`m2`, 2); return true }},
		{"corrupt:to-host,tool=echo,id=2,how=string-id", func(h *host) bool { h.await(`"id":"2"`, 1); return true }},
		{"error:to-server,tool=echo,id=2,message=boom", func(h *host) bool {
			h.await(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`, 1)
			h.await(`m3`, 1)
			return !strings.Contains(h.stdoutText(), `m2`)
		}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "s.jsonl")
			h := startHost(t, nil, os.Args[0], "tap", "--record", rec, "--fault", tc.rule, "--", server)
			h.write(initLine)
			h.await(`"serverInfo"`, 1)
			h.write(initialized, call(2), call(3))
			if !tc.check(h) {
				t.Errorf("host saw:\n%s", h.stdoutText())
			}
			h.stdin.Close()
			h.wait()
			if n := notes(t, rec); !strings.Contains(n, "fault rule 1 ("+tc.rule+") ") {
				t.Errorf("notes:\n%s", n)
			}
		})
	}
}

// TestFaultHTTPGoSDKClient: the HTTP tap with fault rules, the official Go
// SDK's client as the host over Streamable HTTP and the fixture behind
// it: an error rule's answer reaches the host as the call's error and the
// recording notes the rule; answers sent twice (an SSE stream of two
// events) leave the host's result as it is without the rule.
func TestFaultHTTPGoSDKClient(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	target := clitest.FixtureHTTP(t) + "/mcp"
	run := func(rules ...string) (string, string, string, error) {
		rec := filepath.Join(t.TempDir(), "http.jsonl")
		args := []string{"--record", rec}
		for _, r := range rules {
			args = append(args, "--fault", r)
		}
		tap := startHTTPTap(t, target, args...)
		cmd := exec.Command(bin, "-n", "3", "-c", "1", "-tool", "echo", "-args", `{"value":"v"}`, "-url", tap.url)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		tap.stop(t)
		return string(out), stderr.String(), notes(t, rec), err
	}
	_, stderr, recNotes, err := run("error:to-server,tool=echo,code=-32001,message=boom over http")
	if err == nil || !strings.Contains(stderr, "boom over http") {
		t.Errorf("error rule: %v\n%s", err, stderr)
	}
	if !strings.Contains(recNotes, "fault rule 1 (error:to-server,tool=echo,code=-32001,message=boom over http) answered") {
		t.Errorf("the recording does not note the rule:\n%s", recNotes)
	}
	want, stderr, _, err := run()
	if err != nil {
		t.Fatalf("no rule: %v\n%s", err, stderr)
	}
	got, stderr, recNotes, err := run("duplicate:to-host,kind=response,tool=echo")
	if err != nil || gosdkResult(t, got) != gosdkResult(t, want) {
		t.Errorf("duplicate rule: %v\n%s\ngot %s\nwant %s", err, stderr, got, want)
	}
	if !strings.Contains(recNotes, "more time(s)") {
		t.Errorf("the recording does not note the duplicates:\n%s", recNotes)
	}
}

// TestFaultHTTPDropEventResume: a drop rule with max=1 leaves out the SSE
// event that carries the answer to the host's call; the official Go SDK
// client, having seen an event id on that stream, comes back with
// Last-Event-ID, and server-everything (which keeps its events for
// resumption) sends the event again: the rule is spent, so the answer goes
// through. The recording notes the one drop and holds the resuming GET.
func TestFaultHTTPDropEventResume(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	target := peertest.EverythingHTTP(t, "streamableHttp") + "/mcp"
	rec := filepath.Join(t.TempDir(), "resume.jsonl")
	tap := startHTTPTap(t, target, "--record", rec, "--fault", "drop:to-host,tool=echo,max=1")
	cmd := exec.Command(bin, "-n", "1", "-tool", "echo", "-args", `{"message":"after the resume"}`, "-url", tap.url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	tap.stop(t)
	if err != nil {
		t.Fatalf("the host's call failed: %v\n%s", err, stderr.String())
	}
	if got := gosdkResult(t, string(out)); !strings.Contains(got, "after the resume") {
		t.Fatalf("result %s", got)
	}
	if n := notes(t, rec); strings.Count(n, "fault rule 1 (drop:to-host,tool=echo,max=1) dropped the response") != 1 {
		t.Fatalf("the recording should note one drop:\n%s", n)
	}
	resumed := false
	for _, r := range readCapture(t, rec) {
		if r.HTTP != nil && r.HTTP.Method == "GET" && slices.ContainsFunc(r.HTTP.Header, func(h string) bool {
			return strings.HasPrefix(strings.ToLower(h), "> last-event-id: ")
		}) {
			resumed = true
		}
	}
	if !resumed {
		t.Fatal("the recording holds no GET with Last-Event-ID: the host did not resume through the tap")
	}
}
