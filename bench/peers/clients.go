package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/live"
	"github.com/sonde-mcp/sonde/transport"
)

// The clients, in the table's order.
var clientNames = []string{"sonde", "go-sdk", "mcp-go", "pipe"}

// result is one run: n calls, conc in flight, against one server.
type result struct {
	perSec   float64
	p50, p99 time.Duration
}

// runClient starts server srv for client name and makes n echo calls with
// conc in flight; the handshake and the process start are not timed.
func runClient(ctx context.Context, name, srv string, n, conc int) (result, error) {
	argv := []string{self(), "serve", srv}
	switch name {
	case "sonde":
		return runSonde(ctx, argv, n, conc)
	case "go-sdk":
		return runGoSDK(ctx, argv, n, conc)
	case "mcp-go":
		return runMCPGo(ctx, argv, n, conc)
	case "pipe":
		return runPipe(argv, n, conc)
	}
	return result{}, fmt.Errorf("unknown client %q", name)
}

// self is this program's path, to re-execute it as a server.
func self() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// runSonde drives sonde's client with the engine of `sonde bench`: every
// call a request in the pending map, every event emitted.
func runSonde(ctx context.Context, argv []string, n, conc int) (result, error) {
	c := client.New(client.Options{MaxPending: conc})
	if err := c.Connect(client.Stdio(transport.StdioConfig{Argv: argv, Env: os.Environ()})); err != nil {
		return result{}, err
	}
	defer c.Close()
	if _, err := c.Initialize(ctx); err != nil {
		return result{}, err
	}
	rep := live.BenchCalls(ctx, c, "echo", []byte(`{"value":"hello"}`), n, conc)
	if !rep.OK {
		return result{}, fmt.Errorf("sonde: %d ok, %d tool errors, errors %v", rep.Succeeded, rep.ToolErrors, rep.Errors)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return result{perSec: rep.CallsPerSec, p50: ms(rep.P50MS), p99: ms(rep.P99MS)}, nil
}

// runGoSDK drives the official Go SDK's client.
func runGoSDK(ctx context.Context, argv []string, n, conc int) (result, error) {
	cl := mcp.NewClient(&mcp.Implementation{Name: "bench-peers", Version: "v1.0.0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	if err != nil {
		return result{}, err
	}
	defer cs.Close()
	return drive(ctx, n, conc, func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"value": "hello"}})
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		return err
	})
}

// runMCPGo drives mark3labs/mcp-go's client.
func runMCPGo(ctx context.Context, argv []string, n, conc int) (result, error) {
	c, err := mcpgoclient.NewStdioMCPClient(argv[0], os.Environ(), argv[1:]...)
	if err != nil {
		return result{}, err
	}
	defer c.Close()
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench-peers", Version: "v1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return result{}, err
	}
	return drive(ctx, n, conc, func(ctx context.Context) error {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"value": "hello"}
		res, err := c.CallTool(ctx, req)
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		return err
	})
}

// drive makes n calls from conc workers, the way `sonde bench` does, and
// measures them.
func drive(ctx context.Context, n, conc int, call func(context.Context) error) (result, error) {
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	lat := make([]time.Duration, 0, n)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for range next {
				t0 := time.Now()
				err := call(ctx)
				d := time.Since(t0)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if first != nil {
		return result{}, first
	}
	return summarize(lat, elapsed), nil
}

// summarize turns latencies into a result (nearest-rank percentiles, as
// `sonde bench`).
func summarize(lat []time.Duration, elapsed time.Duration) result {
	slices.Sort(lat)
	pct := func(p int) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[max((p*len(lat)+99)/100, 1)-1]
	}
	return result{perSec: float64(len(lat)) / elapsed.Seconds(), p50: pct(50), p99: pct(99)}
}

// runPipe is the raw pipe: the handshake by hand, precomputed request lines
// (as many as fit the window written at once), answers counted by id found
// by byte search, nothing decoded. It is the ceiling of the server and the
// pipes, with no client at all.
func runPipe(argv []string, n, conc int) (result, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 64<<10)
	if err := pipeHandshake(stdin, r); err != nil {
		return result{}, err
	}
	buf, offs := pipeRequests(n)
	sent := make([]atomic.Int64, n+1)
	window := make(chan struct{}, conc)
	for range conc {
		window <- struct{}{}
	}
	start := time.Now()
	werr := make(chan error, 1)
	go func() {
		for i := 1; i <= n; {
			<-window
			j := i + 1
		more:
			for j <= n {
				select {
				case <-window:
					j++
				default:
					break more
				}
			}
			now := time.Since(start).Nanoseconds()
			for k := i; k < j; k++ {
				sent[k].Store(now)
			}
			if _, err := stdin.Write(buf[offs[i]:offs[j]]); err != nil {
				werr <- err
				return
			}
			i = j
		}
		werr <- nil
	}()
	lat := make([]time.Duration, 0, n)
	seen := make([]bool, n+1)
	for len(lat) < n {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return result{}, fmt.Errorf("pipe: after %d answers: %w", len(lat), err)
		}
		raw, ok := member(line, `"id":`)
		id, ok2 := idNumber(raw)
		if !ok || !ok2 || id < 1 || id > n || seen[id] {
			continue
		}
		seen[id] = true
		lat = append(lat, time.Duration(time.Since(start).Nanoseconds()-sent[id].Load()))
		window <- struct{}{}
	}
	elapsed := time.Since(start)
	if err := <-werr; err != nil {
		return result{}, err
	}
	return summarize(lat, elapsed), nil
}

// pipeHandshake is initialize (awaiting its answer) and initialized.
func pipeHandshake(stdin io.Writer, r *bufio.Reader) error {
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}`+"\n"); err != nil {
		return err
	}
	if err := awaitID(r, 0); err != nil {
		return err
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return err
	}
	return nil
}

// pipeRequests are the n tools/call lines, one after another in buf:
// request id i (1..n) is buf[offs[i]:offs[i+1]].
func pipeRequests(n int) (buf []byte, offs []int) {
	offs = make([]int, n+2)
	for i := 1; i <= n; i++ {
		offs[i] = len(buf)
		buf = append(buf, `{"jsonrpc":"2.0","id":`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"value":"hello"}}}`+"\n"...)
	}
	offs[n+1] = len(buf)
	return buf, offs
}

// awaitID reads lines until the answer to id.
func awaitID(r *bufio.Reader, id int) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		if raw, ok := member(line, `"id":`); ok {
			if got, ok := idNumber(raw); ok && got == id {
				return nil
			}
		}
	}
}
