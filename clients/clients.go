// Package clients folds what a tapped session showed of its host (the MCP
// client on the other side of sonde tap): the revision it asks for, how it
// opens the session, the capabilities it declares, and how it behaves (list
// re-fetches inside their cache TTL, trace context, progress tokens,
// parallel calls, and retries under a new id). Fold.Apply takes one
// session's client events in order, as a capture holds them; Merge joins
// sessions into one row per host and version (sonde clients,
// docs/clients.md).
package clients

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Bounds of a Fold's memory.
const (
	// maxRemembered bounds the requests kept in flight, the cancelled
	// calls a retry is looked for against, and the fresh lists (the map is
	// cleared beyond: a retry or re-fetch may then go unseen).
	maxRemembered = 4096
	// MaxExamples bounds the re-fetches and retries listed one by one (the
	// counts go on).
	MaxExamples = 10
	// maxTTL bounds a ttlMs (ten years of milliseconds), so that a huge one
	// stays a time.
	maxTTL = 10 * 365 * 24 * 3600 * 1000.0
)

// Retry kinds: what had become of the earlier request when the same call
// was sent again under a new id.
const (
	AfterCancel = "cancel"     // the host had cancelled it (notifications/cancelled)
	Unanswered  = "unanswered" // it was still waiting for its answer
)

// Session is what one session showed of its host.
type Session struct {
	// Source names where the session was read (a session id or a file);
	// the caller sets it.
	Source string `json:"source,omitempty"`
	// Host and Version are the host's clientInfo (initialize's, or the
	// modern _meta's); empty when it sent none.
	Host    string `json:"host"`
	Version string `json:"version"`
	// Revisions are the protocol revisions the host asked for, in the order
	// it first did (initialize's protocolVersion, the modern _meta's).
	Revisions []string `json:"revisions"`
	// Opens is the method of the host's first request; Fallback says it
	// sent initialize after server/discover.
	Opens    string `json:"opens"`
	Fallback bool   `json:"fallback,omitempty"`
	// Capabilities are the client capabilities it declared, flattened:
	// "sampling", "roots.listChanged", "extensions.io.modelcontextprotocol/ui".
	Capabilities []string `json:"capabilities"`
	// Requests counts the host's requests (not those sonde injected);
	// Traced those with a traceparent in _meta, Progress those with a
	// progressToken.
	Requests int `json:"requests"`
	Traced   int `json:"traced"`
	Progress int `json:"progress_tokens"`
	// MaxInFlight is the most of its requests unanswered at once.
	MaxInFlight int `json:"max_in_flight"`
	// Cached counts the list and read results that carried a positive
	// ttlMs (what a re-fetch is measured against); Refetches the requests
	// for the same list (or resource) sent before that TTL ran out, with no
	// list_changed (or resources/updated) between.
	Cached    int       `json:"cached_results"`
	Refetches int       `json:"refetches"`
	Refetched []Refetch `json:"refetched"`
	// Retries counts the requests that repeat an earlier one (same method,
	// tool and arguments) under a new id, after it was cancelled or while it
	// was unanswered; Cancelled how many of them came after a cancel.
	Retries   int     `json:"retries"`
	Cancelled int     `json:"retries_after_cancel"`
	Retried   []Retry `json:"retried"`
}

// Refetch is one request for a list (or resource) still fresh.
type Refetch struct {
	Method string `json:"method"`
	// Key is the cursor of a list page or the URI of a resources/read.
	Key string `json:"key,omitempty"`
	ID  string `json:"id"`
	// Left is how much of the earlier result's ttlMs was left.
	Left time.Duration `json:"left_ns"`
}

// Retry is one call sent again under a new id.
type Retry struct {
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	ID     string `json:"id"`
	Of     string `json:"of"`
	After  string `json:"after"` // AfterCancel or Unanswered
}

// Fold is the sessions of one capture, as its events go by. The zero value
// is not ready: use New. It is not safe for concurrent use.
type Fold struct {
	done []Session
	cur  state
}

// state is the session being read.
type state struct {
	s       Session
	pending map[jsonrpc.ID]call
	// cancelled maps a call's signature to the id it was cancelled under.
	cancelled map[string]jsonrpc.ID
	// fresh maps a list (or resource) to when its last result goes stale.
	fresh map[string]time.Time
}

// call is one of the host's requests in flight.
type call struct {
	sig, method, tool string
	list              string // its fresh key, for a list or a read
}

// New is a Fold with no session yet.
func New() *Fold {
	f := &Fold{}
	f.cur.reset()
	return f
}

func (st *state) reset() {
	*st = state{
		s:         Session{Revisions: []string{}, Capabilities: []string{}, Refetched: []Refetch{}, Retried: []Retry{}},
		pending:   map[jsonrpc.ID]call{},
		cancelled: map[string]jsonrpc.ID{},
		fresh:     map[string]time.Time{},
	}
}

// Apply folds one event. An event that starts a session (a process started,
// a connection made) ends the one before, if the host had sent anything.
func (f *Fold) Apply(ev client.Event) {
	if ev.StartsSession() {
		if f.cur.s.Requests > 0 {
			f.done = append(f.done, f.cur.s)
			f.cur.reset()
		}
		return
	}
	if ev.Kind != client.EvFrame || ev.Frame == nil {
		return
	}
	fr := ev.Frame
	m := fr.Msg
	switch {
	case fr.Dir == client.Out && m.Kind == jsonrpc.KindRequest && !client.Injected(m.ID):
		f.cur.request(m, fr.Time)
	case fr.Dir == client.Out && m.Kind == jsonrpc.KindNotification && m.Method == mcp.MethodCancelled:
		f.cur.cancel(m.Params)
	case fr.Dir == client.In && m.Kind == jsonrpc.KindResponse:
		f.cur.answer(m, fr.Time)
	case fr.Dir == client.In && m.Kind == jsonrpc.KindNotification:
		f.cur.changed(m)
	}
}

// Sessions are the sessions folded so far, the one under way last (if its
// host sent anything).
func (f *Fold) Sessions() []Session {
	out := slices.Clone(f.done)
	if f.cur.s.Requests > 0 {
		out = append(out, f.cur.s)
	}
	return out
}

// params is what a host's request says about the host.
type params struct {
	Meta            map[string]json.RawMessage `json:"_meta"`
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    json.RawMessage            `json:"capabilities"`
	ClientInfo      *mcp.Implementation        `json:"clientInfo"`
	Name            string                     `json:"name"`
	Arguments       json.RawMessage            `json:"arguments"`
	Cursor          string                     `json:"cursor"`
	URI             string                     `json:"uri"`
}

// request folds one of the host's requests.
func (st *state) request(m jsonrpc.Message, at time.Time) {
	s := &st.s
	var p params
	_ = json.Unmarshal(m.Params, &p) // what does not decode says nothing
	if s.Requests == 0 {
		s.Opens = m.Method
	}
	s.Requests++
	if m.Method == mcp.MethodInitialize {
		if s.Opens == mcp.MethodServerDiscover {
			s.Fallback = true
		}
		st.identify(p.ClientInfo, p.ProtocolVersion, p.Capabilities)
	}
	var info *mcp.Implementation
	var version string
	if raw, ok := p.Meta[mcp.MetaClientInfo]; ok {
		_ = json.Unmarshal(raw, &info)
	}
	if raw, ok := p.Meta[mcp.MetaProtocolVersion]; ok {
		_ = json.Unmarshal(raw, &version)
	}
	st.identify(info, version, p.Meta[mcp.MetaClientCapabilities])
	if str(p.Meta["traceparent"]) != "" {
		s.Traced++
	}
	if tok := p.Meta["progressToken"]; len(tok) > 0 && string(tok) != "null" {
		s.Progress++
	}
	c := call{method: m.Method, list: listKey(m.Method, p)}
	if m.Method == mcp.MethodToolsCall {
		c.tool = p.Name
	}
	c.sig = signature(m.Method, c.tool, m.Params, p.Arguments)
	st.retry(c, m.ID)
	st.refetch(c, m.ID, at)
	if len(st.pending) >= maxRemembered {
		clear(st.pending)
	}
	st.pending[m.ID] = c
	s.MaxInFlight = max(s.MaxInFlight, len(st.pending))
}

// identify takes the host's name, revision and capabilities, the first
// time each is told (the revisions: each new one).
func (st *state) identify(info *mcp.Implementation, version string, caps json.RawMessage) {
	s := &st.s
	if info != nil && s.Host == "" && s.Version == "" {
		s.Host, s.Version = info.Name, info.Version
	}
	if version != "" && !slices.Contains(s.Revisions, version) {
		s.Revisions = append(s.Revisions, version)
	}
	for _, c := range flatten(caps) {
		if !slices.Contains(s.Capabilities, c) {
			s.Capabilities = append(s.Capabilities, c)
		}
	}
	sort.Strings(s.Capabilities)
}

// retry notes a call sent again under a new id: after the earlier one was
// cancelled, or while it is unanswered.
func (st *state) retry(c call, id jsonrpc.ID) {
	r := Retry{Method: c.method, Tool: c.tool, ID: id.String()}
	if of, ok := st.cancelled[c.sig]; ok {
		delete(st.cancelled, c.sig)
		r.Of, r.After = of.String(), AfterCancel
		st.s.Cancelled++
	} else {
		var earlier []jsonrpc.ID
		for pid, p := range st.pending {
			if p.sig == c.sig && pid != id {
				earlier = append(earlier, pid)
			}
		}
		if len(earlier) == 0 {
			return
		}
		sort.Slice(earlier, func(i, j int) bool { return earlier[i].String() < earlier[j].String() })
		r.Of, r.After = earlier[0].String(), Unanswered
	}
	st.s.Retries++
	if len(st.s.Retried) < MaxExamples {
		st.s.Retried = append(st.s.Retried, r)
	}
}

// refetch notes a request for a list (or resource) whose last result is
// still fresh.
func (st *state) refetch(c call, id jsonrpc.ID, at time.Time) {
	if c.list == "" {
		return
	}
	until, ok := st.fresh[c.list]
	if !ok || !at.Before(until) {
		return
	}
	st.s.Refetches++
	if len(st.s.Refetched) < MaxExamples {
		_, key, _ := cutKey(c.list)
		st.s.Refetched = append(st.s.Refetched, Refetch{Method: c.method, Key: key, ID: id.String(), Left: until.Sub(at)})
	}
}

// cancel folds the host's notifications/cancelled: the call is no longer
// in flight, and the same call sent again is a retry.
func (st *state) cancel(raw json.RawMessage) {
	var cp struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if json.Unmarshal(raw, &cp) != nil {
		return
	}
	c, ok := st.pending[cp.RequestID]
	if !ok {
		return
	}
	delete(st.pending, cp.RequestID)
	if len(st.cancelled) >= maxRemembered {
		clear(st.cancelled)
	}
	st.cancelled[c.sig] = cp.RequestID
}

// answer folds the server's response to one of the host's requests: the
// call is answered, and a list result's ttlMs makes it fresh.
func (st *state) answer(m jsonrpc.Message, at time.Time) {
	c, ok := st.pending[m.ID]
	if !ok {
		return
	}
	delete(st.pending, m.ID)
	if c.list == "" || m.Error != nil {
		return
	}
	var r struct {
		TTL *float64 `json:"ttlMs"`
	}
	if json.Unmarshal(m.Result, &r) != nil || r.TTL == nil || *r.TTL <= 0 {
		delete(st.fresh, c.list)
		return
	}
	st.s.Cached++
	if len(st.fresh) >= maxRemembered {
		clear(st.fresh)
	}
	st.fresh[c.list] = at.Add(time.Duration(min(*r.TTL, maxTTL) * float64(time.Millisecond)))
}

// changed folds the server's notifications: a list_changed makes its list
// stale, a resources/updated its resource.
func (st *state) changed(m jsonrpc.Message) {
	var lists []string
	switch m.Method {
	case mcp.MethodToolsChanged:
		lists = []string{mcp.MethodToolsList}
	case mcp.MethodPromptsChanged:
		lists = []string{mcp.MethodPromptsList}
	case mcp.MethodResourcesChanged:
		lists = []string{mcp.MethodResourcesList, mcp.MethodResourceTemplatesList}
	case mcp.MethodResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		delete(st.fresh, mcp.MethodResourcesRead+"\x00"+p.URI)
		return
	default:
		return
	}
	for k := range st.fresh {
		if method, _, _ := cutKey(k); slices.Contains(lists, method) {
			delete(st.fresh, k)
		}
	}
}

// listKey is what a list page or a read is cached under: its method and
// cursor (or URI); "" for other requests.
func listKey(method string, p params) string {
	switch method {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplatesList:
		return method + "\x00" + p.Cursor
	case mcp.MethodResourcesRead:
		return method + "\x00" + p.URI
	case mcp.MethodServerDiscover:
		return method + "\x00"
	}
	return ""
}

// cutKey splits a listKey.
func cutKey(k string) (method, key string, ok bool) {
	return strings.Cut(k, "\x00")
}

// signature is what makes two requests the same call: the method, the tool,
// and the arguments (of a tools/call) or the params without _meta (of
// anything else), as canonical JSON.
func signature(method, tool string, raw, args json.RawMessage) string {
	if method == mcp.MethodToolsCall {
		raw = args
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if obj, ok := v.(map[string]any); ok && method != mcp.MethodToolsCall {
			delete(obj, "_meta")
		}
		if b, err := json.Marshal(v); err == nil {
			raw = b
		}
	}
	return method + "\x00" + tool + "\x00" + string(raw)
}

// flatten names the capabilities of an object: each key, or each key with
// each of its object's keys ("roots.listChanged"); nothing when raw is not
// an object.
func flatten(raw json.RawMessage) []string {
	var caps map[string]json.RawMessage
	if json.Unmarshal(raw, &caps) != nil {
		return nil
	}
	var out []string
	for k, v := range caps {
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) != nil || len(sub) == 0 {
			out = append(out, k)
			continue
		}
		for s, sv := range sub {
			if string(sv) != "false" { // declared off
				out = append(out, k+"."+s)
			}
		}
	}
	return out
}

// str is a JSON string's value, or "".
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
