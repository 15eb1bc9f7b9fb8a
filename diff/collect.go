// Package diff reads what a server showed in a session (its capabilities,
// tools, prompts, resources and the calls made to it) from a client event
// stream, compares two such sessions field by field (sonde diff, and the
// drift gate of sonde check and sonde lint), and measures the context a
// tool costs a model: the bytes of its definition and of its results.
//
// It is pure over events (Collector.Add), so a capture file and a live
// session are read the same way, and memory is bounded: calls are grouped
// by tool and arguments (at most MaxCallGroups groups, MaxSamples latencies
// each).
package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/surface"
)

// Bounds of a Collector's memory.
const (
	// MaxCallGroups bounds the distinct (tool, arguments) groups kept;
	// calls beyond are counted in Shown.CallsDropped.
	MaxCallGroups = 10000
	// MaxSamples bounds the latencies kept per group (the first ones).
	MaxSamples = 256
	// MaxArgs bounds the arguments kept for a group: longer ones keep
	// their start and a hash of the whole (so that two calls still match
	// only when their arguments are the same).
	MaxArgs = 1024
	// maxPending bounds the requests remembered between their frame and
	// their answer (the oldest are forgotten beyond).
	maxPending = 4096
)

// Item is one entry of a list (a tool, a prompt, a resource or a resource
// template), as package surface folds it.
type Item = surface.Item

// CallGroup is every call of one tool with the same arguments.
type CallGroup struct {
	Tool string
	// Args are the arguments, compacted with sorted keys ("{}" for none).
	Args string
	// Outcomes counts the calls by how they ended: a client.State, or
	// "tool-error" for a result with isError.
	Outcomes map[string]int
	// Latencies of the first MaxSamples calls that ended, in order.
	Latencies []time.Duration
	// ResultBytes sums the bytes of the results (the result object,
	// compact, as the server sent it).
	ResultBytes int
	// Seq is the event of the first call's outcome.
	Seq uint64
}

// Calls returns how many calls ended.
func (g *CallGroup) Calls() int {
	n := 0
	for _, c := range g.Outcomes {
		n += c
	}
	return n
}

// Median returns the median latency (0 without samples).
func (g *CallGroup) Median() time.Duration {
	if len(g.Latencies) == 0 {
		return 0
	}
	s := slices.Clone(g.Latencies)
	slices.Sort(s)
	return s[len(s)/2]
}

// Shown is what one session showed: its server's surface (the fold of
// package surface) and the calls made to it.
type Shown struct {
	surface.Known
	// Groups are the calls, by tool and arguments, in order of first call.
	Groups []*CallGroup
	// CallsDropped counts calls beyond MaxCallGroups groups.
	CallsDropped int
}

// A Done is a call that ended, as Collector.Add reports it.
type Done struct {
	Tool    string
	Args    string
	State   client.State
	Latency time.Duration
	// ToolError: the result had isError.
	ToolError bool
	// FrameSeq is the event of the answer's frame (0 if none came).
	FrameSeq uint64
}

// pending is a request sonde sent, until its answer.
type pending struct {
	method   string
	tool     string
	args     string
	frameSeq uint64
	isError  bool
	bytes    int
	// params are a tools/call's params, kept by a NewToolCollector until
	// the outcome names the tool.
	params json.RawMessage
}

// Collector folds one session's events. Use NewCollector; it is not safe
// for concurrent use.
type Collector struct {
	s       Shown
	pending map[jsonrpc.ID]*pending
	// order lists the pending ids, oldest first, with ids already answered
	// left in it (dropped when it is compacted, at twice maxPending).
	order   []jsonrpc.ID
	scratch bytes.Buffer // for measuring compact JSON
	groups  map[string]*CallGroup
	// toolsOnly groups calls by tool alone (NewToolCollector).
	toolsOnly bool
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{
		s:       Shown{Known: surface.Known{Listed: map[string]bool{}}},
		pending: map[jsonrpc.ID]*pending{},
		groups:  map[string]*CallGroup{},
	}
}

// NewToolCollector returns an empty collector that groups calls by tool
// alone: their arguments are not read (every group's Args, and every
// Done's, is empty), so one group per tool holds all its calls. It is what
// the context cost (Costs) and the gates need, at a fraction of the cost of
// canonicalising every call's arguments.
func NewToolCollector() *Collector {
	c := NewCollector()
	c.toolsOnly = true
	return c
}

// Shown returns what was collected so far. It shares memory with the
// collector: read it, and stop adding events meanwhile.
func (c *Collector) Shown() *Shown { return &c.s }

// Add folds one event. It returns the call that ev ended, if ev is the
// outcome of a tools/call.
func (c *Collector) Add(ev client.Event) *Done {
	c.s.Known.Apply(ev)
	switch ev.Kind {
	case client.EvFrame:
		if ev.Frame != nil && ev.Frame.Err == nil {
			c.frame(ev)
		}
	case client.EvRequest:
		if r := ev.Req; r != nil && r.Dir == client.Out && r.State.Final() {
			return c.outcome(ev.Seq, r)
		}
	}
	return nil
}

func (c *Collector) frame(ev client.Event) {
	f := ev.Frame
	m := f.Msg
	switch {
	case f.Dir == client.Out && m.Kind == jsonrpc.KindRequest:
		c.request(ev.Seq, m)
	case f.Dir == client.In && m.Kind == jsonrpc.KindResponse:
		p := c.pending[m.ID]
		if p == nil || f.Verdict != client.VerdictResolved && f.Verdict != client.VerdictRemoteError {
			return
		}
		p.frameSeq = ev.Seq
		if m.Error != nil {
			return
		}
		c.result(p, m.Result)
	}
}

func (c *Collector) request(seq uint64, m jsonrpc.Message) {
	p := &pending{method: m.Method, frameSeq: 0}
	switch m.Method {
	case mcp.MethodToolsCall:
		if c.toolsOnly {
			p.params = m.Params // the name is read from the outcome (toolName)
			break
		}
		var ps mcp.CallToolParams
		_ = json.Unmarshal(m.Params, &ps)
		p.tool, p.args = ps.Name, boundArgs(Canonical(ps.Arguments))
	default:
		return
	}
	if _, ok := c.pending[m.ID]; !ok {
		c.order = append(c.order, m.ID)
	}
	c.pending[m.ID] = p
	if len(c.order) > 2*maxPending {
		c.order = slices.DeleteFunc(c.order, func(id jsonrpc.ID) bool { return c.pending[id] == nil })
	}
	for len(c.pending) > maxPending { // forget the oldest
		delete(c.pending, c.order[0])
		c.order = c.order[1:]
	}
}

// result reads a tools/call's answer: isError, and its size.
func (c *Collector) result(p *pending, result json.RawMessage) {
	if p.method != mcp.MethodToolsCall {
		return
	}
	if bytes.Contains(result, []byte(`"isError"`)) {
		var r struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(result, &r)
		p.isError = r.IsError
	}
	c.scratch.Reset()
	if json.Compact(&c.scratch, result) == nil {
		p.bytes = c.scratch.Len()
	} else {
		p.bytes = len(result)
	}
}

func (c *Collector) outcome(seq uint64, r *client.ReqInfo) *Done {
	p := c.pending[r.ID]
	if p == nil {
		return nil
	}
	delete(c.pending, r.ID)
	if p.method != mcp.MethodToolsCall || r.State == client.StateRetried {
		return nil
	}
	if c.toolsOnly {
		p.tool = toolName(r, p.params)
	}
	d := &Done{Tool: p.tool, Args: p.args, State: r.State, Latency: r.Latency, ToolError: p.isError, FrameSeq: p.frameSeq}
	k := p.tool + "\x00" + p.args
	g := c.groups[k]
	if g == nil {
		if len(c.s.Groups) >= MaxCallGroups {
			c.s.CallsDropped++
			return d
		}
		g = &CallGroup{Tool: p.tool, Args: p.args, Outcomes: map[string]int{}, Seq: seq}
		c.groups[k] = g
		c.s.Groups = append(c.s.Groups, g)
	}
	g.Outcomes[outcomeName(d)]++
	if len(g.Latencies) < MaxSamples {
		g.Latencies = append(g.Latencies, r.Latency)
	}
	g.ResultBytes += p.bytes
	return d
}

// toolName is the tool a call's outcome names (the client's lifecycle
// events carry it), or else the name in its params.
func toolName(r *client.ReqInfo, params json.RawMessage) string {
	if r.Tool != "" {
		return r.Tool
	}
	var ps struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &ps)
	return ps.Name
}

// boundArgs keeps arguments of up to MaxArgs bytes as they are, and of
// longer ones their first 256 bytes, "…" and the SHA-256 of the whole.
func boundArgs(s string) string {
	if len(s) <= MaxArgs {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.ToValidUTF8(s[:256], "") + "…sha256:" + hex.EncodeToString(sum[:])
}

// OutcomeToolError is the outcome of a call whose result had isError.
const OutcomeToolError = "tool-error"

func outcomeName(d *Done) string {
	if d.State == client.StateResolved && d.ToolError {
		return OutcomeToolError
	}
	return string(d.State)
}

// Canonical returns a JSON value compacted with object keys sorted, so that
// the same arguments written two ways compare equal ("{}" for nothing; the
// text itself if it is not JSON).
func Canonical(b json.RawMessage) string {
	if len(bytes.TrimSpace(b)) == 0 || string(bytes.TrimSpace(b)) == "null" {
		return "{}"
	}
	v, ok := decode(b)
	if !ok {
		return string(b)
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return string(b)
	}
	return string(out)
}

// decode reads one JSON value, numbers kept as written (json.Number).
func decode(b []byte) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}
