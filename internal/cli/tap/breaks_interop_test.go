package tap_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/replay"
)

// sdkClient is the Go SDK's client (interop/gosdk-client) running in the
// background through `sonde tap` with breakpoints.
type sdkClient struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan error
}

// startSDK starts the Go SDK's client with flags, on argv (the tap and the
// server), with SONDE_HOME=home.
func startSDK(t *testing.T, home string, flags []string, argv ...string) *sdkClient {
	t.Helper()
	bin := peertest.GoSDKClient(t)
	c := &sdkClient{done: make(chan error, 1)}
	c.cmd = exec.Command(bin, append(append(flags, "-terminate", "2s", "--"), argv...)...)
	c.cmd.Env = append(append(os.Environ(), clitest.ChildEnv()...), "SONDE_HOME="+home)
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.done
			t.Error("the Go SDK client did not end")
		}
	})
	return c
}

// report waits for the client and decodes its report.
func (c *sdkClient) report(t *testing.T) (map[string]json.RawMessage, error) {
	t.Helper()
	var err error
	select {
	case err = <-c.done:
		c.done <- err
	case <-time.After(60 * time.Second):
		t.Fatalf("the Go SDK client did not end:\n%s", c.stderr.String())
	}
	var r map[string]json.RawMessage
	if err == nil {
		if jerr := json.Unmarshal(c.stdout.Bytes(), &r); jerr != nil {
			t.Fatalf("report: %v: %s", jerr, c.stdout.String())
		}
	}
	return r, err
}

// heldNow waits until the live session holds n frames and returns them
// (sonde breaks --json, one object a line).
func heldNow(t *testing.T, n int) []hold.Held {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := clitest.RunSonde(t, "", "breaks", "--json")
		var held []hold.Held
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			var h hold.Held
			if line != "" && json.Unmarshal([]byte(line), &h) == nil {
				held = append(held, h)
			}
		}
		if r.Code == 0 && len(held) == n {
			return held
		}
		if time.Now().After(deadline) {
			t.Fatalf("held %d, want %d (exit %d)\n%s%s", len(held), n, r.Code, r.Stdout, r.Stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// breakServers are the servers of the breakpoint tests: echo's arguments
// (a template, %d the call's number) and the text its answer holds.
var breakServers = []struct {
	name string
	argv func(t *testing.T) []string
	args string
}{
	{"fixture", func(t *testing.T) []string { return clitest.NewFixture(t).Argv() }, `{"value":"orig-%d"}`},
	{"server-everything", func(t *testing.T) []string { return []string{peertest.Everything(t)} }, `{"message":"orig-%d"}`},
}

// tapArgv is sonde tap with a label and flags in front of server.
func tapArgv(flags []string, server ...string) []string {
	return append(append(append([]string{os.Args[0], "tap", "--label", "brk"}, flags...), "--"), server...)
}

// sessionFile is the one recording of home's sessions folder.
func sessionFile(t *testing.T, home string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "brk-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	return files[0]
}

// TestBreaksGoSDKEdit: a held tools/call answer edited with sonde breaks
// edit reaches the Go SDK's client edited; the recording has the edit.
func TestBreaksGoSDKEdit(t *testing.T) {
	for _, tc := range breakServers {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("SONDE_HOME", home)
			c := startSDK(t, home, []string{"-distinct", "-args", tc.args}, tapArgv([]string{"--break", "dir:in kind:response tool:echo", "--break-timeout", "0"}, tc.argv(t)...)...)
			h := heldNow(t, 1)[0]
			if h.Method != "tools/call" || h.Tool != "echo" || h.Direction != "in" || h.TimeoutMS != 0 {
				t.Errorf("held %+v", h)
			}
			edit := filepath.Join(t.TempDir(), "edit.json")
			os.WriteFile(edit, bytes.ReplaceAll(h.Frame, []byte("orig-0"), []byte("edited by sonde breaks")), 0o600)
			clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "edit", h.Handle, "--json", edit), 0, "")
			r, err := c.report(t)
			if err != nil || !strings.Contains(string(r["result"]), "edited by sonde breaks") || strings.Contains(string(r["result"]), "orig") {
				t.Fatalf("the client got %s (%v)\n%s", r["result"], err, c.stderr.String())
			}
			var edited bool
			for _, rec := range readCapture(t, sessionFile(t, home)) {
				edited = edited || rec.Hold != nil && rec.Hold.Action == "edited" && rec.Hold.By == "socket" && strings.Contains(rec.Hold.Original, "orig-0")
			}
			if !edited {
				t.Error("the recording has no edit")
			}
			// sonde replay shows the hold: how long, and what was sent.
			tl, err := replay.Open(sessionFile(t, home), 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer tl.Close()
			nums := make([]int32, tl.Len())
			for i := range nums {
				nums[i] = int32(i)
			}
			var shown bool
			for _, ev := range tl.Events(nums) {
				shown = shown || ev.Kind == client.EvNote && strings.Contains(ev.Note, "edited h1") && strings.Contains(ev.Note, "held") && strings.Contains(ev.Note, "edited by sonde breaks")
			}
			if !shown {
				t.Error("replay shows no edit with its held time")
			}
		})
	}
}

// TestBreaksGoSDKAnswer: a held request answered with sonde breaks answer
// gives the client that answer, and the server never gets the request
// (a tap of its own, in front of the server, records what it got).
func TestBreaksGoSDKAnswer(t *testing.T) {
	for _, tc := range breakServers {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("SONDE_HOME", home)
			inner := filepath.Join(t.TempDir(), "server-side.jsonl")
			server := append([]string{os.Args[0], "tap", "--record", inner, "--"}, tc.argv(t)...)
			c := startSDK(t, home, []string{"-distinct", "-args", tc.args}, tapArgv([]string{"--break", "dir:out tool:echo", "--break-timeout", "0"}, server...)...)
			h := heldNow(t, 1)[0]
			if h.Kind != "request" || h.Direction != "out" {
				t.Errorf("held %+v", h)
			}
			r := clitest.RunSonde(t, "", "breaks", "answer", h.Handle, "--result", `{"content":[{"type":"text","text":"answered by sonde"}]}`)
			clitest.CheckRun(t, r, 0, "")
			rep, err := c.report(t)
			if err != nil || !strings.Contains(string(rep["result"]), "answered by sonde") {
				t.Fatalf("the client got %s (%v)\n%s", rep["result"], err, c.stderr.String())
			}
			var got []string
			for _, rec := range readCapture(t, inner) {
				if rec.Type == capture.TypeFrame && rec.Dir == "out" {
					got = append(got, rec.Method)
				}
			}
			if slices.Contains(got, "tools/call") || !slices.Contains(got, "tools/list") {
				t.Errorf("the server got %v", got)
			}
		})
	}
}

// TestBreaksGoSDKReverse: two held answers released in reverse order are
// matched by id by the client (each call gets its own value), and reach
// it in the order released.
func TestBreaksGoSDKReverse(t *testing.T) {
	for _, tc := range breakServers {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("SONDE_HOME", home)
			c := startSDK(t, home, []string{"-n", "2", "-c", "2", "-distinct", "-results", "-args", tc.args},
				tapArgv([]string{"--break", "dir:in kind:response tool:echo", "--break-timeout", "0"}, tc.argv(t)...)...)
			held := heldNow(t, 2)
			clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "release", held[1].Handle, held[0].Handle), 0, "")
			rep, err := c.report(t)
			if err != nil {
				t.Fatalf("%v\n%s", err, c.stderr.String())
			}
			var results []json.RawMessage
			json.Unmarshal(rep["results"], &results)
			if len(results) != 2 || !strings.Contains(string(results[0]), "orig-0") || !strings.Contains(string(results[1]), "orig-1") {
				t.Fatalf("results %s", rep["results"])
			}
			var order []string
			for _, rec := range readCapture(t, sessionFile(t, home)) {
				if rec.Type == capture.TypeFrame && rec.Dir == "in" && strings.Contains(rec.Raw, "orig-") {
					order = append(order, rec.ID.String())
				}
			}
			if len(order) != 2 || order[0] != held[1].ID || order[1] != held[0].ID {
				t.Errorf("the host received ids %v; released %s then %s", order, held[1].ID, held[0].ID)
			}
		})
	}
}

// inHashes are the sha256 of the answers a recording says the host
// received, sorted (server-everything's notifications come by time: a
// run that lasts longer has more).
func inHashes(t *testing.T, path string) []string {
	var out []string
	for _, rec := range readCapture(t, path) {
		if rec.Type == capture.TypeFrame && rec.Dir == "in" && rec.Kind == capture.KindResponse {
			s := sha256.Sum256([]byte(rec.Raw))
			out = append(out, hex.EncodeToString(s[:]))
		}
	}
	slices.Sort(out)
	return out
}

// TestBreaksGoSDKAutoContinue: a held answer nobody decides on goes on
// unchanged after --break-timeout; everything the host received is byte
// for byte what it receives through a tap without breakpoints (hashes).
func TestBreaksGoSDKAutoContinue(t *testing.T) {
	for _, tc := range breakServers {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("SONDE_HOME", home)
			args := strings.ReplaceAll(tc.args, "%d", "0")
			direct := filepath.Join(t.TempDir(), "direct.jsonl")
			want := gosdkRun(t, peertest.GoSDKClient(t), 1, 1, "echo", args, append([]string{os.Args[0], "tap", "--record", direct, "--"}, tc.argv(t)...)...)
			c := startSDK(t, home, []string{"-args", args}, tapArgv([]string{"--break", "dir:in kind:response tool:echo", "--break-timeout", "1s"}, tc.argv(t)...)...)
			rep, err := c.report(t)
			if err != nil || string(rep["result"]) != string(want.Result) {
				t.Fatalf("auto-continued: %s (%v), want %s\n%s", rep["result"], err, want.Result, c.stderr.String())
			}
			path := sessionFile(t, home)
			var steps []string
			for _, rec := range readCapture(t, path) {
				if rec.Hold != nil {
					steps = append(steps, string(rec.Hold.Action)+"/"+string(rec.Hold.By))
					if rec.Hold.Action == "released" && rec.Hold.HeldNS < int64(time.Second) {
						t.Errorf("released after %v", time.Duration(rec.Hold.HeldNS))
					}
				}
			}
			if strings.Join(steps, ",") != "held/,released/timeout" {
				t.Errorf("steps %v", steps)
			}
			if got, want := inHashes(t, path), inHashes(t, direct); !slices.Equal(got, want) {
				t.Errorf("the host received other bytes than through a tap without breakpoints:\n%v\n%v", got, want)
			}
		})
	}
}

// TestBreaksGoSDKDrop: a dropped answer never reaches the client, which
// times out.
func TestBreaksGoSDKDrop(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	c := startSDK(t, home, []string{"-results", "-call-timeout", "3s", "-args", `{"value":"dropped"}`},
		tapArgv([]string{"--break", "dir:in kind:response tool:echo", "--break-timeout", "0"}, clitest.NewFixture(t).Argv()...)...)
	h := heldNow(t, 1)[0]
	clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "drop", h.Handle), 0, "")
	rep, err := c.report(t)
	if err != nil || !strings.Contains(string(rep["results"]), "error") || strings.Contains(string(rep["results"]), `"dropped"`) {
		t.Fatalf("results %s (%v)\n%s", rep["results"], err, c.stderr.String())
	}
}

// TestBreaksHostile: a refused edit (not JSON, over the limit, an id
// another request has in flight) or answer (of an answer) is a usage
// error that says why, and the frame stays held; an unknown handle too;
// releasing the rest lets the client finish, and nothing is left running.
func TestBreaksHostile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	c := startSDK(t, home, []string{"-n", "2", "-c", "2", "-distinct", "-results", "-args", `{"value":"v%d"}`},
		tapArgv([]string{"--break", "dir:out tool:echo", "--break-timeout", "0"}, clitest.NewFixture(t).Argv()...)...)
	held := heldNow(t, 2)
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o600)
		return p
	}
	var other map[string]any
	json.Unmarshal(held[0].Frame, &other)
	other["id"] = json.RawMessage(held[1].ID)
	colliding, _ := json.Marshal(other)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"edit", held[0].Handle, "--json", file("bad.json", []byte(`{"jsonrpc":"2.0","id":`))}, "at byte"},
		{[]string{"edit", held[0].Handle, "--json", file("huge.json", bytes.Repeat([]byte(" "), hold.MaxEditBytes+10))}, "over the"},
		{[]string{"edit", held[0].Handle, "--json", file("collide.json", colliding)}, "in flight"},
		{[]string{"edit", held[0].Handle, "--json", file("many.json", []byte(`[1,2]`))}, "not a JSON-RPC message"},
		{[]string{"release", "h99"}, "no frame is held as h99"},
		{[]string{"answer", held[0].Handle, "--error", "x"}, "want CODE"},
		{[]string{"rm", "7"}, "no breakpoint 7"},
		{[]string{"add", "tool:"}, "breakpoint"},
	} {
		r := clitest.RunSonde(t, "", append([]string{"breaks"}, tc.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("breaks %v: exit %d, want 2 and %q\n%s", tc.args[0], r.Code, tc.want, r.Stderr)
		}
	}
	if again := heldNow(t, 2); again[0].Handle != held[0].Handle {
		t.Errorf("held after the refusals: %+v", again)
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "release", "--all"), 0, "")
	rep, err := c.report(t)
	if err != nil || !strings.Contains(string(rep["results"]), "v0") || !strings.Contains(string(rep["results"]), "v1") {
		t.Fatalf("results %s (%v)\n%s", rep["results"], err, c.stderr.String())
	}
}

// TestBreaksWatchDetach: a connection that asked sonde/breaks/watch is a
// watcher: when it closes, everything held is released at once (no
// timeout), said in the recording.
func TestBreaksWatchDetach(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	c := startSDK(t, home, []string{"-args", `{"value":"watched"}`},
		tapArgv([]string{"--break", "dir:in kind:response tool:echo", "--break-timeout", "0"}, clitest.NewFixture(t).Argv()...)...)
	heldNow(t, 1)
	sock := strings.TrimSuffix(sessionFile(t, home), ".jsonl") + ".sock"
	r := exec.Command(os.Args[0], dialArg, sock, `{"jsonrpc":"2.0","id":1,"method":"sonde/breaks/watch"}`)
	r.Env = append(os.Environ(), clitest.ChildEnv()...)
	out, err := r.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"held"`) {
		t.Fatalf("watch: %v\n%s", err, out)
	}
	rep, err := c.report(t)
	if err != nil || !strings.Contains(string(rep["result"]), "watched") {
		t.Fatalf("the client got %s (%v)", rep["result"], err)
	}
	var detached bool
	for _, rec := range readCapture(t, sessionFile(t, home)) {
		detached = detached || rec.Hold != nil && rec.Hold.By == "detach"
	}
	if !detached {
		t.Error("not released by detach")
	}
}

// TestBreaksInspectorHost: the official Inspector's CLI as the host,
// launching sonde tap --break in front of server-everything: the echo
// answer held and edited with sonde breaks edit reaches it edited.
func TestBreaksInspectorHost(t *testing.T) {
	everything := peertest.Everything(t)
	home := t.TempDir()
	t.Setenv("SONDE_HOME", home)
	args := []string{"-e", "SONDE_HOME=" + home}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "-e", kv)
	}
	args = append(args, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=orig-0", "--")
	args = append(args, tapArgv([]string{"--break", "dir:in tool:echo", "--break-timeout", "0"}, everything)...)
	cmd := peertest.Inspector(t, args...)
	type result struct {
		out, errs string
		ok        bool
	}
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		done <- result{stdout.String(), stderr.String(), err == nil}
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
	})
	h := heldNow(t, 1)[0]
	edit := filepath.Join(t.TempDir(), "edit.json")
	os.WriteFile(edit, bytes.ReplaceAll(h.Frame, []byte("orig-0"), []byte("edited for the inspector")), 0o600)
	clitest.CheckRun(t, clitest.RunSonde(t, "", "breaks", "edit", h.Handle, "--json", edit), 0, "")
	select {
	case r := <-done:
		done <- r
		if !r.ok || !strings.Contains(r.out, "edited for the inspector") || strings.Contains(r.out, "orig-0") {
			t.Fatalf("the Inspector: ok %v\nstdout %s\nstderr %s", r.ok, r.out, r.errs)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the Inspector did not end")
	}
}
