package tap_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/transport"
)

// drive runs a client session on argv: initialize, tools/list, one
// tools/call, close. It returns the tool names, the call's result and
// the frames the client saw, by direction.
func drive(t *testing.T, argv []string, tool string, args string) ([]string, string, map[string]int) {
	t.Helper()
	env, _ := transport.BuildEnv(os.Environ(), nil, clitest.ChildEnv())
	c := client.New(client.Options{})
	sub := c.Subscribe(1 << 16)
	if err := c.Connect(client.Stdio(transport.StdioConfig{Argv: argv, Env: env})); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, raw, err := c.CallTool(ctx, tool, json.RawMessage(args), client.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	frames := map[string]int{}
	for ev := range sub.C {
		if ev.Kind == client.EvFrame {
			frames[ev.Frame.Dir.String()]++
		}
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names, string(raw), frames
}

// echoServers are the servers the interop tests call echo on through the
// tap: the fixture and the reference server (server-everything, installed
// by make peers), each with its command line and echo's arguments.
var echoServers = []struct {
	name       string
	argv       func(t *testing.T) []string
	tool, args string
}{
	{"fixture", func(t *testing.T) []string { return clitest.NewFixture(t).Argv() }, "echo", `{"value":"hi"}`},
	{"server-everything", func(t *testing.T) []string { return []string{peertest.Everything(t)} }, "echo", `{"message":"hi"}`},
}

// TestTapInterop: sonde's client gets the same tools and the same answer
// through `sonde tap` as directly, from the fixture and from the reference
// server (server-everything, installed by make peers), and the tap's
// recording holds every frame the client saw, in each direction.
func TestTapInterop(t *testing.T) {
	for _, tc := range echoServers {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.argv(t)
			wantTools, wantResult, _ := drive(t, server, tc.tool, tc.args)
			rec := filepath.Join(t.TempDir(), "s.jsonl")
			tools, result, frames := drive(t, append([]string{os.Args[0], "tap", "--record", rec, "--"}, server...), tc.tool, tc.args)
			if !slices.Equal(tools, wantTools) || result != wantResult {
				t.Errorf("through the tap: tools %v, result %s\ndirect: tools %v, result %s", tools, result, wantTools, wantResult)
			}
			recorded := map[string]int{}
			for _, r := range readCapture(t, rec) {
				if r.Type == capture.TypeFrame {
					recorded[r.Dir]++
				}
			}
			// The client's out is the host's (out), its in the server's.
			if recorded["out"] != frames["out"] || recorded["in"] != frames["in"] {
				t.Errorf("recorded frames %v, the client saw %v", recorded, frames)
			}
		})
	}
}

// gosdkRun runs the Go SDK's client (interop/gosdk-client) on argv with n
// calls, c in flight, and decodes its report.
func gosdkRun(t testing.TB, bin string, n, c int, tool, args string, argv ...string) gosdkReport {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-n", strconv.Itoa(n), "-c", strconv.Itoa(c), "-tool", tool, "-args", args, "-terminate", "500ms", "--"}, argv...)...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gosdk-client %v: %v\n%s", argv, err, stderr.String())
	}
	var r gosdkReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("gosdk-client: %v: %s", err, out)
	}
	return r
}

type gosdkReport struct {
	Tools     []string        `json:"tools"`
	Result    json.RawMessage `json:"result"`
	CallsPerS float64         `json:"calls_per_s"`
	P50       int64           `json:"p50_ns"`
}

// TestTapGoSDKClient: a client nobody here wrote (the official Go SDK's)
// gets the same tools and answers through `sonde tap` as directly, from
// the fixture and from server-everything, and the recording has each of
// its requests resolved.
func TestTapGoSDKClient(t *testing.T) {
	bin := peertest.GoSDKClient(t)
	for _, tc := range echoServers {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.argv(t)
			want := gosdkRun(t, bin, 5, 2, tc.tool, tc.args, server...)
			rec := filepath.Join(t.TempDir(), "s.jsonl")
			got := gosdkRun(t, bin, 5, 2, tc.tool, tc.args, append([]string{os.Args[0], "tap", "--record", rec, "--"}, server...)...)
			if !slices.Equal(got.Tools, want.Tools) || string(got.Result) != string(want.Result) {
				t.Errorf("through the tap: %v %s\ndirect: %v %s", got.Tools, got.Result, want.Tools, want.Result)
			}
			resolved := map[string]int{}
			for _, r := range readCapture(t, rec) {
				if r.Type == capture.TypeRequest && r.Dir == "out" && r.State == "resolved" {
					resolved[r.Method]++
				}
			}
			if resolved["initialize"] != 1 || resolved["tools/list"] != 1 || resolved["tools/call"] != 5 {
				t.Errorf("resolved in the recording: %v", resolved)
			}
		})
	}
}
