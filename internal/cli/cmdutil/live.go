package cmdutil

import (
	"context"
	"sync"

	"github.com/sonde-mcp/sonde/client"
)

// LiveClients are the clients of one run. On a second interrupt they are
// killed at once instead of waiting out the grace periods of a clean close.
type LiveClients struct {
	mu      sync.Mutex
	clients []*client.Client
	closed  bool
}

// Add registers c; it reports false once the run is ending (the caller
// must then close c itself).
func (l *LiveClients) Add(c *client.Client) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.clients = append(l.clients, c)
	return true
}

func (l *LiveClients) snapshot() []*client.Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*client.Client(nil), l.clients...)
}

// CloseAll closes every client (concurrently) and refuses new ones.
func (l *LiveClients) CloseAll() {
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

// KillAll kills every client's server now.
func (l *LiveClients) KillAll() {
	for _, c := range l.snapshot() {
		c.Kill()
	}
}

type liveKey struct{}

// WithLive attaches the registry of a run to its context.
func WithLive(ctx context.Context, l *LiveClients) context.Context {
	return context.WithValue(ctx, liveKey{}, l)
}

// LiveFrom returns the run's registry (a fresh one when none is attached).
func LiveFrom(ctx context.Context) *LiveClients {
	if l, ok := ctx.Value(liveKey{}).(*LiveClients); ok {
		return l
	}
	return &LiveClients{}
}
