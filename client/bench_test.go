package client

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// BenchmarkPipelinedEcho measures calls over a real fixture subprocess with
// C calls in flight at once. ns/op is per call; calls/s is reported too.
func BenchmarkPipelinedEcho(b *testing.B) {
	for _, conc := range []int{1, 16, 64} {
		b.Run("c="+strconv.Itoa(conc), func(b *testing.B) {
			env, _ := transport.BuildEnv(os.Environ(), nil, fixturetest.ChildEnv())
			c := New(Options{MaxPending: conc})
			argv, _ := fixturetest.Argv(b)
			if err := c.Connect(Stdio(transport.StdioConfig{Argv: argv, Env: env})); err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Initialize(context.Background()); err != nil {
				b.Fatal(err)
			}
			runPipelined(b, c, conc)
		})
	}
}

// runPipelined makes b.N echo calls from conc goroutines as sonde bench
// makes them: GoTool (a progress token added), then ToolIsError on the
// result.
func runPipelined(b *testing.B, c *Client, conc int) {
	args := json.RawMessage(`{"value":"hello"}`)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				raw, err := c.GoTool(context.Background(), "echo", args, CallOptions{}).Wait()
				if err == nil {
					_, err = ToolIsError("echo", raw)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkEventStream isolates the client's own cost per call, with an
// in-memory peer that answers at once, and compares no subscriber, one
// subscriber that keeps up, and one that never reads (every event missed).
func BenchmarkEventStream(b *testing.B) {
	for _, mode := range []string{"none", "draining", "stalled"} {
		b.Run("subscriber="+mode, func(b *testing.B) {
			c := New(Options{MaxPending: 64})
			var drained sync.WaitGroup
			switch mode {
			case "draining":
				sub := c.Subscribe(4096)
				drained.Add(1)
				go func() {
					defer drained.Done()
					for range sub.C {
					}
				}()
			case "stalled":
				c.Subscribe(1)
			}
			peer := newEchoPeer()
			if err := c.Connect(func(transport.Observer) (transport.Conn, error) { return peer, nil }); err != nil {
				b.Fatal(err)
			}
			c.mu.Lock()
			c.initialized = true
			c.mu.Unlock()
			runPipelined(b, c, 16)
			c.Close()
			drained.Wait()
		})
	}
}

// echoPeer is an in-memory server: every request written is answered with
// an empty result on the read side.
type echoPeer struct {
	lines     chan []byte
	closeOnce sync.Once
	closed    chan struct{}
}

func newEchoPeer() *echoPeer {
	return &echoPeer{lines: make(chan []byte, 1024), closed: make(chan struct{})}
}

func (p *echoPeer) Write(raw []byte) error {
	m, err := jsonrpc.Decode(raw)
	if err != nil || m.Kind != jsonrpc.KindRequest {
		return nil
	}
	resp, _ := jsonrpc.EncodeResult(m.ID, json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`))
	select {
	case p.lines <- resp:
		return nil
	case <-p.closed:
		return transport.ErrStdinClosed
	}
}

func (p *echoPeer) Read() (transport.Frame, error) {
	select {
	case line := <-p.lines:
		return transport.NewInFrame(line, time.Now()), nil
	case <-p.closed:
		return transport.Frame{}, io.EOF
	}
}

func (p *echoPeer) Close() error {
	p.closeOnce.Do(func() { close(p.closed) })
	return nil
}

// BenchmarkPipelinedEchoHTTP is BenchmarkPipelinedEcho over loopback HTTP:
// the fixture's HTTP server (in this process) answering each POST with an
// SSE stream, or with one JSON body.
func BenchmarkPipelinedEchoHTTP(b *testing.B) {
	for _, answer := range []string{"sse", "json"} {
		for _, conc := range []int{1, 16} {
			b.Run(answer+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				var args []string
				if answer == "json" {
					args = []string{"--http-json"}
				}
				ctx, cancel := context.WithCancel(context.Background())
				served := make(chan error, 1)
				go func() { served <- fixtures.ServeHTTP(ctx, ln, args, io.Discard) }()
				defer func() { cancel(); <-served }()
				c := New(Options{MaxPending: conc})
				if err := c.Connect(HTTP(transport.HTTPConfig{URL: "http://" + ln.Addr().String() + "/mcp", Mode: transport.ModeStreamable})); err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Initialize(context.Background()); err != nil {
					b.Fatal(err)
				}
				runPipelined(b, c, conc)
			})
		}
	}
}
