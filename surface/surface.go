// Package surface folds what a session showed of its server: the server's
// name and version, the protocol, the capabilities, and the last complete
// listing of its tools, prompts, resources and resource templates (the
// pages of a listing joined). It is pure over client events (Known.Apply),
// so a capture file and a live session are read the same way; diff, gate,
// replay and the watch UI read a session's surface through it.
package surface

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Bounds of a Known's memory.
const (
	// maxPending bounds the requests remembered between their frame and
	// their answer (the oldest are forgotten beyond).
	maxPending = 4096
	// MaxItems bounds the tools, prompts and resources of one list.
	MaxItems = 10000
)

// The lists a session can fetch: the keys of Known.Listed.
const (
	Tools     = "tools"
	Prompts   = "prompts"
	Resources = "resources"
	Templates = "templates"
)

// Item is one entry of a list (a tool, a prompt, a resource or a resource
// template): its key (name, or URI) and its definition as the server sent
// it, compacted.
type Item struct {
	Key string
	Def json.RawMessage
	// Seq is the event of the frame that listed it.
	Seq uint64
}

// Known is what a session showed of its server so far. The zero value is
// ready: feed it a session's events, in order, with Apply. It is not safe
// for concurrent use.
type Known struct {
	Server       mcp.Implementation
	Protocol     string
	Capabilities json.RawMessage
	// Instructions are the server's (initialize's or server/discover's),
	// as it sent them.
	Instructions string
	// Tools, Prompts, Resources and Templates are the last complete
	// listing of each (in the server's order; the pages of a listing
	// joined).
	Tools, Prompts, Resources, Templates []Item
	// Listed says which lists the session fetched (a list it never asked
	// for is unknown, not empty): keys Tools, Prompts, Resources,
	// Templates.
	Listed map[string]bool
	// At says when each list's last complete listing came (keys as
	// Listed's).
	At map[string]Listing
	// Late makes Apply take a late answer too (VerdictLate: one to a
	// request the requester had given up on). Set it for a watched session,
	// where the host gave up, not the server: its late tools/list answer
	// is still the server's tool list. Without it, a request's final
	// outcome forgets it and only a resolved answer counts.
	Late bool

	pending map[jsonrpc.ID]ask
	// order lists the pending ids, oldest first, with ids already answered
	// left in it (dropped when it is compacted, at twice maxPending).
	order  []jsonrpc.ID
	paging map[string]paging // listings under way, by list
}

// paging is a listing under way: its items so far, and when its first
// page was asked for.
type paging struct {
	items []Item
	asked time.Time
}

// ask is a request sonde sent that the fold waits the answer of.
type ask struct {
	method string
	cursor bool      // a list request continuing a listing
	at     time.Time // when its frame was sent
}

// Listing is when a list's complete listing came.
type Listing struct {
	// Seq is the event of its last page's answer.
	Seq uint64
	// Asked is when the request of its first page was sent: what the
	// server changed before then is in the listing.
	Asked time.Time
}

// Tool returns the tool named name and whether it was listed.
func (k *Known) Tool(name string) (Item, bool) { return Find(k.Tools, name) }

// Find returns the item of items with key, and whether there is one.
func Find(items []Item, key string) (Item, bool) {
	for _, it := range items {
		if it.Key == key {
			return it, true
		}
	}
	return Item{}, false
}

// Apply folds one event: a request sonde sent for the server's surface
// (initialize, server/discover, a list), its answer, or its outcome.
func (k *Known) Apply(ev client.Event) {
	switch ev.Kind {
	case client.EvFrame:
		if ev.Frame != nil && ev.Frame.Err == nil {
			k.frame(ev)
		}
	case client.EvRequest:
		if r := ev.Req; r != nil && r.Dir == client.Out && r.State.Final() && !k.Late {
			delete(k.pending, r.ID)
		}
	}
}

func (k *Known) frame(ev client.Event) {
	f := ev.Frame
	m := f.Msg
	switch {
	case f.Dir == client.Out && m.Kind == jsonrpc.KindRequest:
		k.request(m, f.Time)
	case f.Dir == client.In && m.Kind == jsonrpc.KindResponse:
		a, ok := k.pending[m.ID]
		if !ok || !k.answers(f.Verdict) {
			return
		}
		if k.Late {
			delete(k.pending, m.ID) // no outcome will
		}
		if m.Error == nil {
			k.result(ev.Seq, a, m.Result)
		}
	}
}

// answers says whether a response of verdict v is the server's answer.
func (k *Known) answers(v client.Verdict) bool {
	return v == client.VerdictResolved || v == client.VerdictRemoteError || k.Late && v == client.VerdictLate
}

func (k *Known) request(m jsonrpc.Message, at time.Time) {
	a := ask{method: m.Method, at: at}
	switch m.Method {
	case mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourceTemplatesList:
		var ps mcp.ListParams
		_ = json.Unmarshal(m.Params, &ps)
		a.cursor = ps.Cursor != ""
	case mcp.MethodInitialize, mcp.MethodServerDiscover:
	default:
		return
	}
	if k.pending == nil {
		k.pending = map[jsonrpc.ID]ask{}
	}
	if _, ok := k.pending[m.ID]; !ok {
		k.order = append(k.order, m.ID)
	}
	k.pending[m.ID] = a
	if len(k.order) > 2*maxPending {
		k.order = slices.DeleteFunc(k.order, func(id jsonrpc.ID) bool {
			_, ok := k.pending[id]
			return !ok
		})
	}
	for len(k.pending) > maxPending { // forget the oldest
		delete(k.pending, k.order[0])
		k.order = k.order[1:]
	}
}

// listKey names the list a method fetches, and the field of its items.
func listKey(method string) (list, field, key string) {
	switch method {
	case mcp.MethodToolsList:
		return Tools, "tools", "name"
	case mcp.MethodPromptsList:
		return Prompts, "prompts", "name"
	case mcp.MethodResourcesList:
		return Resources, "resources", "uri"
	case mcp.MethodResourceTemplatesList:
		return Templates, "resourceTemplates", "uriTemplate"
	}
	return "", "", ""
}

func (k *Known) result(seq uint64, a ask, result json.RawMessage) {
	switch a.method {
	case mcp.MethodInitialize:
		var r mcp.InitializeResult
		if json.Unmarshal(result, &r) == nil {
			k.Server, k.Protocol, k.Capabilities = r.ServerInfo, r.ProtocolVersion, Compact(r.Capabilities)
			k.Instructions = r.Instructions
		}
	case mcp.MethodServerDiscover:
		var r mcp.DiscoverResult
		if json.Unmarshal(result, &r) == nil {
			k.Capabilities, k.Instructions = Compact(r.Capabilities), r.Instructions
			if len(r.SupportedVersions) > 0 {
				k.Protocol = r.SupportedVersions[0]
			}
		}
	default:
		k.listPage(seq, a, result)
	}
}

func (k *Known) listPage(seq uint64, a ask, result json.RawMessage) {
	list, field, keyField := listKey(a.method)
	if list == "" {
		return
	}
	var page map[string]json.RawMessage
	if json.Unmarshal(result, &page) != nil {
		return
	}
	var raw []json.RawMessage
	_ = json.Unmarshal(page[field], &raw)
	p := k.paging[list]
	if !a.cursor {
		p = paging{asked: a.at}
	}
	items := p.items
	for _, r := range raw {
		var obj map[string]json.RawMessage
		if json.Unmarshal(r, &obj) != nil || len(items) >= MaxItems {
			continue
		}
		var key string
		_ = json.Unmarshal(obj[keyField], &key)
		items = append(items, Item{Key: key, Def: Compact(r), Seq: seq})
	}
	var next string
	_ = json.Unmarshal(page["nextCursor"], &next)
	if next != "" {
		if k.paging == nil {
			k.paging = map[string]paging{}
		}
		k.paging[list] = paging{items: items, asked: p.asked}
		return
	}
	delete(k.paging, list)
	if k.Listed == nil {
		k.Listed = map[string]bool{}
	}
	if k.At == nil {
		k.At = map[string]Listing{}
	}
	k.Listed[list] = true
	k.At[list] = Listing{Seq: seq, Asked: p.asked}
	switch list {
	case Tools:
		k.Tools = items
	case Prompts:
		k.Prompts = items
	case Resources:
		k.Resources = items
	case Templates:
		k.Templates = items
	}
}

// Compact returns b without insignificant space (b itself if it is not
// valid JSON, nil for nothing).
func Compact(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return slices.Clone(b)
	}
	return buf.Bytes()
}
