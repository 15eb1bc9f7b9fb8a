package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/sonde-mcp/sonde/client"
)

// liveClients are the clients of one run. On a second interrupt they are
// killed at once instead of waiting out the grace periods of a clean close.
type liveClients struct {
	mu      sync.Mutex
	clients []*client.Client
	closed  bool
}

// add registers c; it reports false once the run is ending (the caller
// must then close c itself).
func (l *liveClients) add(c *client.Client) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.clients = append(l.clients, c)
	return true
}

func (l *liveClients) snapshot() []*client.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*client.Client(nil), l.clients...)
}

// closeAll closes every client (concurrently) and refuses new ones.
func (l *liveClients) closeAll() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range l.snapshot() {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// killAll kills every client's server now.
func (l *liveClients) killAll() {
	for _, c := range l.snapshot() {
		c.Kill()
	}
}

type liveKey struct{}

// withLive attaches the registry of a run to its context.
func withLive(ctx context.Context, l *liveClients) context.Context {
	return context.WithValue(ctx, liveKey{}, l)
}

// liveFrom returns the run's registry (a fresh one when none is attached).
func liveFrom(ctx context.Context) *liveClients {
	if l, ok := ctx.Value(liveKey{}).(*liveClients); ok {
		return l
	}
	return &liveClients{}
}

// runWithSignals runs the command line as the sonde binary does: the first
// SIGINT, SIGTERM or SIGHUP (a closed terminal) cancels the run, which stops
// the server cleanly; a second one kills the server at once. The same code
// serves Windows, where Go delivers Ctrl-C and Ctrl-Break as os.Interrupt and
// a closed console window, logoff or shutdown as SIGTERM (SIGHUP never
// comes).
func runWithSignals(args []string, in io.Reader, out, errw io.Writer) int {
	if len(args) > 0 && args[0] == "fixture" {
		// The fixture is a server, not a client: signals keep their default
		// effect (SIGTERM ends it at once, as docs/fixtures.md says); its
		// HTTP mode handles them itself.
		return run(context.Background(), args, in, out, errw)
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	live := &liveClients{}
	ctx, cancel := context.WithCancel(withLive(context.Background(), live))
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(errw, "sonde: interrupted again: killing the server now")
			live.killAll()
		case <-done:
		}
	}()
	return run(ctx, args, in, out, errw)
}
