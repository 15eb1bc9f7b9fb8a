// Command peers is sonde's peer benchmark: sonde's client, the official Go
// SDK's client, mark3labs/mcp-go's client and a raw pipe, each making
// pipelined tools/call echo calls against the same servers (sonde's fixture,
// an echo server written with the Go SDK, and a minimal server answering from
// precomputed bytes), at several numbers of calls in flight. It prints one
// table of calls/s, p50 and p99 (medians of the runs) with sonde's ratios to
// the others. It lives outside sonde's go.mod so that the peers' modules never
// enter sonde's. Run it with `make bench-peers` (docs/performance.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "serve" {
		os.Exit(serve(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == "onecall" {
		os.Exit(oneCall(os.Args[2]))
	}
	if len(os.Args) > 1 && os.Args[1] == "startup" {
		os.Exit(startup(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, runs every cell and prints the table; it returns the exit
// code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 20000, "calls per run")
	runs := fs.Int("runs", 3, "runs per cell (the table shows medians)")
	concs := fs.String("c", "1,16,64", "calls in flight, comma-separated")
	servers := fs.String("servers", strings.Join(serverNames, ","), "servers, comma-separated")
	clients := fs.String("clients", strings.Join(clientNames, ","), "clients, comma-separated")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var cs []int
	for f := range strings.SplitSeq(*concs, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 1 {
			fmt.Fprintf(stderr, "peers: bad -c %q\n", f)
			return 2
		}
		cs = append(cs, c)
	}
	srvs, cls := strings.Split(*servers, ","), strings.Split(*clients, ",")
	for _, s := range srvs {
		if !slices.Contains(serverNames, s) {
			fmt.Fprintf(stderr, "peers: unknown server %q\n", s)
			return 2
		}
	}
	for _, c := range cls {
		if !slices.Contains(clientNames, c) {
			fmt.Fprintf(stderr, "peers: unknown client %q\n", c)
			return 2
		}
	}
	if *n < 1 || *runs < 1 {
		fmt.Fprintln(stderr, "peers: -n and -runs must be at least 1")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prog := newProgress(stderr, len(srvs)*len(cs)*len(cls)**runs)
	cells := map[cell][]result{}
	// Runs are the outer loop so that a change in the machine's load spreads
	// over every cell instead of landing on one.
	for range *runs {
		for _, s := range srvs {
			for _, c := range cs {
				for _, cl := range cls {
					prog.step(fmt.Sprintf("%s c=%d %s", s, c, cl))
					r, err := runClient(ctx, cl, s, *n, c)
					if err != nil {
						prog.done()
						fmt.Fprintf(stderr, "peers: %s against %s, c=%d: %v\n", cl, s, c, err)
						return 1
					}
					k := cell{s, c, cl}
					cells[k] = append(cells[k], r)
				}
			}
		}
	}
	prog.done()
	fmt.Fprintf(stdout, "%d calls per run, medians of %d runs; %s, %d CPUs, %s/%s\n\n", *n, *runs, runtime.Version(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	printTable(stdout, srvs, cs, cls, cells)
	return 0
}

// cell is one server, concurrency and client.
type cell struct {
	server string
	conc   int
	client string
}

// median is the median of each figure of rs, taken separately.
func median(rs []result) result {
	mid := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return result{
		perSec: mid(func(r result) float64 { return r.perSec }),
		p50:    time.Duration(mid(func(r result) float64 { return float64(r.p50) })),
		p99:    time.Duration(mid(func(r result) float64 { return float64(r.p99) })),
	}
}

// printTable writes one Markdown table: a row per server and concurrency, a
// column per client (calls/s, p50, p99), and sonde's ratios of calls/s.
func printTable(w io.Writer, srvs []string, cs []int, cls []string, cells map[cell][]result) {
	head := []string{"server", "in flight"}
	for _, cl := range cls {
		head = append(head, cl+" calls/s", cl+" p50", cl+" p99")
	}
	var ratios []string
	if slices.Contains(cls, "sonde") {
		for _, other := range []string{"mcp-go", "pipe", "go-sdk"} {
			if slices.Contains(cls, other) {
				ratios = append(ratios, other)
				head = append(head, "sonde/"+other)
			}
		}
	}
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, s := range srvs {
		for _, c := range cs {
			row := []string{s, strconv.Itoa(c)}
			med := map[string]result{}
			for _, cl := range cls {
				m := median(cells[cell{s, c, cl}])
				med[cl] = m
				row = append(row, fmt.Sprintf("%.0f", m.perSec), dur(m.p50), dur(m.p99))
			}
			for _, other := range ratios {
				row = append(row, fmt.Sprintf("%.2f", med["sonde"].perSec/med[other].perSec))
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
	}
}

// dur is a latency in µs or ms.
func dur(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// progress shows the cell being run on one line of a terminal, and nothing
// when stderr is not a terminal.
type progress struct {
	w     io.Writer // nil when quiet
	i, of int
	start time.Time
}

func newProgress(stderr io.Writer, of int) *progress {
	p := &progress{of: of, start: time.Now()}
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.w = stderr
		}
	}
	return p
}

func (p *progress) step(what string) {
	p.i++
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\x1b[K[%d/%d %s] %s", p.i, p.of, time.Since(p.start).Round(time.Second), what)
	}
}

func (p *progress) done() {
	if p.w != nil {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
