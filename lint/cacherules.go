package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
)

// The freshness rules of the cache hints (SEP-2549): cache-refetch, a
// client that asks again for a list or read whose earlier result is still
// fresh (inside its ttlMs), and cache-changed, a server whose answer
// changed while the earlier one was still fresh. A list_changed (or
// resources/updated) notification from the server in between ends the
// freshness: asking again is then right, and the change was announced.

// maxFresh bounds the fresh results a Linter remembers.
const maxFresh = 1024

// freshResult is the last result of one list or read (its cache key).
type freshResult struct {
	seq   uint64
	at    time.Time
	ttl   time.Duration
	sum   [sha256.Size]byte // of the result without ttlMs, cacheScope and _meta
	ttlMs string
}

func (r freshResult) until() time.Time { return r.at.Add(r.ttl) }

// cacheKey names what a modern list or read request asks for: its method,
// a resources/read's uri and a list's cursor (each page is its own result).
func cacheKey(method string, params json.RawMessage) string {
	var p struct {
		URI    string          `json:"uri"`
		Cursor json.RawMessage `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	k := method
	if method == mcp.MethodResourcesRead {
		k += " " + p.URI
	}
	if len(p.Cursor) > 0 && !bytes.Equal(p.Cursor, []byte("null")) {
		k += " cursor " + string(p.Cursor)
	}
	return k
}

// frameTime is when the event's frame crossed the wire.
func frameTime(ev client.Event) time.Time {
	if f := ev.Frame; f != nil && !f.Time.IsZero() {
		return f.Time
	}
	return ev.Time
}

// cacheRefetch: cache-refetch, on a request of the client's.
func (l *Linter) cacheRefetch(ev client.Event) {
	f := ev.Frame
	if !cached(f.Msg.Method) || f.Msg.Method == mcp.MethodServerDiscover || !modernRequest(f) {
		return
	}
	key := cacheKey(f.Msg.Method, requestParams(f))
	prev, ok := l.fresh[key]
	t := frameTime(ev)
	if !ok || !t.Before(prev.until()) {
		return
	}
	l.add(ev, RuleCacheRefetch, fmt.Sprintf("%s asked again %s after the result at event %d, whose ttlMs %s had %s to run (no list_changed or resources/updated in between)",
		bounded(key, 200), textfmt.Dur(t.Sub(prev.at)), prev.seq, prev.ttlMs, textfmt.Dur(prev.until().Sub(t))))
}

// cacheChanged: cache-changed, on a result of the server's; it also
// remembers the result and its freshness.
func (l *Linter) cacheChanged(ev client.Event) {
	p, ok := l.answered(ev)
	if !ok || p.cacheKey == "" {
		return
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(ev.Frame.Msg.Result, &r) != nil || r == nil {
		return
	}
	ttlRaw := r["ttlMs"]
	for _, k := range []string{"ttlMs", "cacheScope", "_meta", "resultType"} {
		delete(r, k)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return
	}
	cur := freshResult{seq: ev.Seq, at: frameTime(ev), sum: sha256.Sum256(body), ttlMs: string(ttlRaw)}
	if prev, ok := l.fresh[p.cacheKey]; ok && cur.at.Before(prev.until()) && cur.sum != prev.sum {
		l.add(ev, RuleCacheChanged, fmt.Sprintf("%s result differs from the one at event %d, whose ttlMs %s still had %s to run (no list_changed or resources/updated in between): a client that kept it shows stale data",
			bounded(p.cacheKey, 200), prev.seq, prev.ttlMs, textfmt.Dur(prev.until().Sub(cur.at))))
	}
	var ms int64
	if jsonType(ttlRaw) != jsNumber || !nonNegInt(ttlRaw) || json.Unmarshal(ttlRaw, &ms) != nil || ms <= 0 {
		delete(l.fresh, p.cacheKey) // not fresh at all (0, or cache-hint's business)
		return
	}
	cur.ttl = time.Duration(min(ms, int64(100*365*24*time.Hour/time.Millisecond))) * time.Millisecond
	if _, ok := l.fresh[p.cacheKey]; !ok && len(l.fresh) >= maxFresh {
		clear(l.fresh)
	}
	l.fresh[p.cacheKey] = cur
}

// cacheNotified ends the freshness a server notification announces.
func (l *Linter) cacheNotified(ev client.Event) {
	m := &ev.Frame.Msg
	var methods []string
	switch m.Method {
	case mcp.MethodToolsChanged:
		methods = []string{mcp.MethodToolsList}
	case mcp.MethodPromptsChanged:
		methods = []string{mcp.MethodPromptsList}
	case mcp.MethodResourcesChanged:
		methods = []string{mcp.MethodResourcesList, mcp.MethodResourceTemplatesList}
	case mcp.MethodResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		delete(l.fresh, mcp.MethodResourcesRead+" "+p.URI)
		return
	default:
		return
	}
	for k := range l.fresh {
		for _, method := range methods {
			if k == method || len(k) > len(method) && k[:len(method)+1] == method+" " {
				delete(l.fresh, k)
			}
		}
	}
}
