package mcpserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrUnknownSession is the error of a session id the registry does not
// hold (never started, or stopped).
var ErrUnknownSession = errors.New("unknown session")

// ErrTooManySessions is the error of a session past --max-sessions.
var ErrTooManySessions = errors.New("too many sessions")

// registry holds the server's sessions by id ("s1", "s2", ...: never
// reused), at most max at once.
type registry struct {
	mu     sync.Mutex
	max    int
	next   int
	byID   map[string]*session
	closed bool
}

func newRegistry(max int) *registry {
	return &registry{max: max, byID: map[string]*session{}}
}

// reserve takes a place and an id for a session about to start, or says
// why not. The caller gives the place back with release (start failed) or
// fills it with put.
func (r *registry) reserve() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", errors.New("sonde mcp is shutting down")
	}
	if len(r.byID) >= r.max {
		return "", fmt.Errorf("%w: %d open (--max-sessions %d); stop one with session_stop, or run sonde mcp with a larger --max-sessions", ErrTooManySessions, len(r.byID), r.max)
	}
	r.next++
	id := "s" + strconv.Itoa(r.next)
	r.byID[id] = nil // reserved
	return id, nil
}

// release gives a reserved place back.
func (r *registry) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.byID[id]; ok && s == nil {
		delete(r.byID, id)
	}
}

// put fills a reserved place. When the registry closed meanwhile, it
// closes s and returns false.
func (r *registry) put(s *session) bool {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		s.close()
		return false
	}
	r.byID[s.id] = s
	r.mu.Unlock()
	return true
}

// get returns the session id names.
func (r *registry) get(id string) (*session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.byID[id]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("%w %q: session_start returns a session id (sessions_list lists them)", ErrUnknownSession, id)
}

// remove takes id out and returns it (nil when not held).
func (r *registry) remove(id string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byID[id]
	if s != nil {
		delete(r.byID, id)
	}
	return s
}

// list returns the sessions, oldest first.
func (r *registry) list() []*session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*session, 0, len(r.byID))
	for _, s := range r.byID {
		if s != nil {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *session) int { return a.seq - b.seq })
	return out
}

// closeAll closes every session and refuses new ones.
func (r *registry) closeAll() {
	r.mu.Lock()
	r.closed = true
	all := make([]*session, 0, len(r.byID))
	for id, s := range r.byID {
		if s != nil {
			all = append(all, s)
		}
		delete(r.byID, id)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}

// closeOwned closes the sessions owner started (its MCP session ended).
func (r *registry) closeOwned(owner *sdk.ServerSession) {
	r.mu.Lock()
	var mine []*session
	for id, s := range r.byID {
		if s != nil && s.owner != nil && s.owner == owner {
			mine = append(mine, s)
			delete(r.byID, id)
		}
	}
	r.mu.Unlock()
	for _, s := range mine {
		s.close()
	}
}
