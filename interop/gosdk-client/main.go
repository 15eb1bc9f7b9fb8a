// Command gosdk-client is an MCP client built with the official Go SDK
// (go-sdk v1.8.0), outside sonde's go.mod, for sonde's tests: it starts a
// stdio server (or connects to -url over Streamable HTTP), calls a tool n
// times with c calls in flight, and prints one JSON line: the tool list,
// the first result, and the timings; with -read URI and -prompt NAME, the
// resource and the prompt too.
//
// With -distinct, each call's arguments have %d replaced by the call's
// number (from 0); -results reports every call's result by number (a call
// that failed: {"error": MESSAGE}) and goes on after a failed call;
// -call-timeout bounds each call.
//
//	gosdk-client [-n N] [-c C] [-tool NAME] [-args JSON] [-distinct] [-results] [-call-timeout D] [-terminate D] [-read URI] [-prompt NAME] (-url URL | -- COMMAND [ARG...])
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
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
	distinct := flag.Bool("distinct", false, "replace %d in -args by the call's number")
	results := flag.Bool("results", false, "report every call's result (or error) by number, and go on after a failed call")
	callTimeout := flag.Duration("call-timeout", 0, "bound each call (0: none)")
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
	opt := callOpts{distinct: *distinct, results: *results, timeout: *callTimeout}
	lat, first, all, elapsed := callAll(ctx, cs, *n, *c, *tool, *args, opt, fail)
	report := map[string]any{}
	if *results {
		report["results"] = all
	}
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

// callOpts are -distinct, -results and -call-timeout.
type callOpts struct {
	distinct, results bool
	timeout           time.Duration
}

// callAll makes n calls of tool with args, c at a time: their latencies
// (by call), the first result, every result (with opt.results) and the
// time they took together.
func callAll(ctx context.Context, cs *mcp.ClientSession, n, c int, tool, args string, opt callOpts, fail func(error)) (lat []time.Duration, first []byte, all []json.RawMessage, elapsed time.Duration) {
	lat = make([]time.Duration, n)
	all = make([]json.RawMessage, n)
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
				a := args
				if opt.distinct {
					a = strings.ReplaceAll(args, "%d", strconv.FormatInt(i, 10))
				}
				t0 := time.Now()
				cctx, cancel := ctx, context.CancelFunc(func() {})
				if opt.timeout > 0 {
					cctx, cancel = context.WithTimeout(ctx, opt.timeout)
				}
				res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(a)})
				cancel()
				if err != nil && !opt.results {
					fail(err)
				}
				lat[i] = time.Since(t0)
				if err != nil {
					all[i], _ = json.Marshal(map[string]string{"error": err.Error()})
					continue
				}
				b, _ := json.Marshal(res)
				all[i] = b
				once.Do(func() { first = b })
			}
		}()
	}
	wg.Wait()
	return lat, first, all, time.Since(start)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gosdk-client:", err)
	os.Exit(1)
}
