package hold

import (
	"encoding/json"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// reqKey names a request in flight: the way it went and its id.
type reqKey struct {
	dir client.Direction
	id  string
}

type reqInfo struct{ method, tool string }

// requests is the table of requests in flight, learnt from the frames
// offered: an answer is judged by its request (method, tool), and an edit
// may not give a request an id already in flight. It keeps maxRequests,
// forgetting the oldest.
type requests struct {
	m     map[reqKey]reqInfo
	order []reqKey
}

func newRequests() requests { return requests{m: map[reqKey]reqInfo{}} }

func (r *requests) add(k reqKey, v reqInfo) {
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
	}
	r.m[k] = v
	for len(r.m) > maxRequests && len(r.order) > 0 {
		delete(r.m, r.order[0])
		r.order = r.order[1:]
	}
	if len(r.order) > 2*maxRequests { // keys of answered requests linger in order
		kept := r.order[:0]
		for _, k := range r.order {
			if _, ok := r.m[k]; ok {
				kept = append(kept, k)
			}
		}
		r.order = kept
	}
}

func (r *requests) has(k reqKey) bool { _, ok := r.m[k]; return ok }

func opposite(d client.Direction) client.Direction {
	if d == client.In {
		return client.Out
	}
	return client.In
}

// frame is what the Engine knows of one offered frame.
type frame struct {
	dir  client.Direction
	msg  jsonrpc.Message
	ok   bool // msg decoded
	item filter.Item
}

// judge decodes raw and describes it as --filter would: a response with
// its request's method and tool. It learns requests and forgets answered
// ones (the caller holds e.mu).
func (r *requests) judge(dir client.Direction, raw []byte) frame {
	f := frame{dir: dir, item: filter.Item{Dir: dir.String(), Payload: raw}}
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		return f
	}
	f.msg, f.ok = msg, true
	f.item.Method = msg.Method
	f.item.Kind = msg.Kind.String()
	if msg.Kind == jsonrpc.KindResponse && msg.Error != nil {
		f.item.Kind = "error"
	}
	if msg.ID.IsValid() {
		f.item.ID = msg.ID.String()
	}
	switch msg.Kind {
	case jsonrpc.KindRequest:
		info := reqInfo{method: msg.Method, tool: toolOf(msg)}
		f.item.Tool = info.tool
		if msg.ID.IsValid() {
			r.add(reqKey{dir, f.item.ID}, info)
		}
	case jsonrpc.KindResponse:
		k := reqKey{opposite(dir), f.item.ID}
		if q, ok := r.m[k]; ok {
			f.item.Method, f.item.Tool = q.method, q.tool
			delete(r.m, k)
		}
	}
	return f
}

// toolOf is a tools/call request's tool name.
func toolOf(msg jsonrpc.Message) string {
	if msg.Method != "tools/call" || len(msg.Params) == 0 {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return ""
	}
	return p.Name
}
