// Command gosdk-client is an MCP client built with the official Go SDK
// (go-sdk v1.8.0), outside sonde's go.mod, for sonde's tests: it starts a
// stdio server (or connects to -url over Streamable HTTP), calls a tool n
// times with c calls in flight, and prints one JSON line: the tool list,
// the first result, and the timings; with -read URI and -prompt NAME, the
// resource and the prompt too.
//
//	gosdk-client [-n N] [-c C] [-tool NAME] [-args JSON] [-terminate D] [-read URI] [-prompt NAME] (-url URL | -- COMMAND [ARG...])
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	n := flag.Int("n", 1, "calls")
	c := flag.Int("c", 1, "calls in flight")
	tool := flag.String("tool", "echo", "tool to call")
	args := flag.String("args", `{"value":"hello"}`, "the tool's arguments (JSON)")
	terminate := flag.Duration("terminate", 5*time.Second, "how long Close waits after closing stdin before SIGTERM")
	url := flag.String("url", "", "connect to this Streamable HTTP endpoint instead of starting a command")
	read := flag.String("read", "", "also read this resource")
	prompt := flag.String("prompt", "", "also get this prompt (no arguments)")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 && *url == "" {
		fmt.Fprintln(os.Stderr, "usage: gosdk-client [-n N] [-c C] [-tool NAME] [-args JSON] [-read URI] [-prompt NAME] (-url URL | -- COMMAND [ARG...])")
		os.Exit(2)
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-client", Version: "v1.0.0"}, nil)
	var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: *url}
	if *url == "" {
		tr = &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...), TerminateDuration: *terminate}
	}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		fail(err)
	}
	// A failure ends the session before the exit, so that the server (or
	// a tap in front of it) is stopped as at the end, not left behind.
	fail := func(err error) {
		cs.Close()
		fail(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fail(err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	lat, first, elapsed := callAll(ctx, cs, *n, *c, *tool, *args, fail)
	report := map[string]any{}
	if *read != "" {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: *read})
		if err != nil {
			fail(err)
		}
		report["resource"] = res
	}
	if *prompt != "" {
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: *prompt})
		if err != nil {
			fail(err)
		}
		report["prompt"] = res
	}
	cs.Close()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	for k, v := range map[string]any{
		"tools": names, "result": json.RawMessage(first), "calls": *n, "in_flight": *c,
		"calls_per_s": float64(*n) / elapsed.Seconds(), "p50_ns": lat[len(lat)/2].Nanoseconds(),
	} {
		report[k] = v
	}
	out, _ := json.Marshal(report)
	fmt.Println(string(out))
}

// callAll makes n calls of tool with args, c at a time: their latencies
// (by call), the first result and the time they took together.
func callAll(ctx context.Context, cs *mcp.ClientSession, n, c int, tool, args string, fail func(error)) (lat []time.Duration, first []byte, elapsed time.Duration) {
	lat = make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
				if err != nil {
					fail(err)
				}
				lat[i] = time.Since(t0)
				once.Do(func() { first, _ = json.Marshal(res) })
			}
		}()
	}
	wg.Wait()
	return lat, first, time.Since(start)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gosdk-client:", err)
	os.Exit(1)
}
