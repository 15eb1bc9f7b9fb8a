package main

import (
	"context"

	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneCall is the bare go-sdk one-call program the start-up benchmark holds
// sonde call against: spawn the server, handshake, one echo call, print the
// text, close.
func oneCall(srv string) int {
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench-peers", Version: "v1.0.0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(self(), "serve", srv)}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "onecall:", err)
		return 1
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"value": "hello"}})
	if err != nil || res.IsError {
		fmt.Fprintln(os.Stderr, "onecall: call failed:", err)
		return 1
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Println(t.Text)
		}
	}
	return 0
}

// proc is one whole process's figures, from the kernel's accounting.
type proc struct {
	wall, cpu time.Duration
	rssKB     int64
}

// runProc runs argv to its end, its output thrown away.
func runProc(argv []string) (proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return proc{}, fmt.Errorf("%v: %w", argv, err)
	}
	p := proc{wall: time.Since(t0), cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.rssKB = ru.Maxrss
	}
	return p, nil
}

// startup runs `sonde call` and the go-sdk one-call program as whole
// processes, in turn, and prints each one's medians and sonde's ratios. The
// CPU and peak RSS are the client process's and its children's (the server is
// the same program for both), as the kernel counts them.
func startup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peers startup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sonde := fs.String("sonde", "sonde", "the sonde binary")
	runs := fs.Int("runs", 21, "runs of each program, in turn")
	srv := fs.String("server", "minimal", "server")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !slices.Contains(serverNames, *srv) || *runs < 1 {
		fmt.Fprintln(stderr, "peers startup: bad -server or -runs")
		return 2
	}
	progs := [][]string{
		{*sonde, "call", "echo", "--args", `{"value":"hello"}`, "--", self(), "serve", *srv},
		{self(), "onecall", *srv},
	}
	got := make([][]proc, len(progs))
	for i := range *runs + 1 {
		for j, argv := range progs {
			p, err := runProc(argv)
			if err != nil {
				fmt.Fprintln(stderr, "peers startup:", err)
				return 1
			}
			if i > 0 { // the first round warms the page cache
				got[j] = append(got[j], p)
			}
		}
	}
	med := func(ps []proc, f func(proc) float64) float64 {
		vs := make([]float64, len(ps))
		for i, p := range ps {
			vs[i] = f(p)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	figs := []struct {
		name string
		f    func(proc) float64
	}{
		{"wall ms", func(p proc) float64 { return p.wall.Seconds() * 1000 }},
		{"CPU ms", func(p proc) float64 { return p.cpu.Seconds() * 1000 }},
		{"peak RSS MB", func(p proc) float64 { return float64(p.rssKB) / 1024 }},
	}
	fmt.Fprintf(stdout, "\nstart-up, one call against %s, whole processes in turn, medians of %d\n", *srv, *runs)
	fmt.Fprintf(stdout, "%-12s %10s %10s %8s\n", "", "sonde call", "go-sdk", "ratio")
	for _, fg := range figs {
		a, b := med(got[0], fg.f), med(got[1], fg.f)
		fmt.Fprintf(stdout, "%-12s %10.1f %10.1f %7.2f×\n", fg.name, a, b, a/b)
	}
	return 0
}
