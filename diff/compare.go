package diff

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/surface"
)

// Change kinds.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Sections of a Change.
const (
	SectionServer       = "server"
	SectionCapabilities = "capabilities"
	SectionTool         = "tool"
	SectionPrompt       = "prompt"
	SectionResource     = "resource"
	SectionTemplate     = "resource-template"
)

// maxFieldChanges bounds the field changes listed for one item.
const maxFieldChanges = 50

// Change is one difference between two sessions' definitions.
type Change struct {
	Section string `json:"section"`
	// Key is the item's name (or URI); empty for the capabilities.
	Key  string `json:"key,omitempty"`
	Kind string `json:"kind"` // Added, Removed or Changed
	// Field is the path of the changed field ("description",
	// "inputSchema.properties.q.type", "annotations.destructiveHint");
	// empty for a whole item added or removed.
	Field string `json:"field,omitempty"`
	// Old and New are the values, compact JSON (empty when absent).
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Note says why the change matters, when it does ("read-only tool
	// turned destructive").
	Note string `json:"note,omitempty"`
	// Drift, for a change of one of a tool's four hints
	// (annotations.readOnlyHint, destructiveHint, idempotentHint,
	// openWorldHint), says which way it went: DriftLoosened (the tool now
	// claims less harm, so a host may ask less) or DriftTightened.
	Drift string `json:"drift,omitempty"`
}

// The directions of a hint change (Change.Drift).
const (
	DriftLoosened  = "loosened"
	DriftTightened = "tightened"
)

// safeHint is the value of each hint that claims less harm.
var safeHint = map[string]bool{
	"annotations.readOnlyHint": true, "annotations.destructiveHint": false,
	"annotations.idempotentHint": true, "annotations.openWorldHint": false,
}

// hintDrift says which way a hint change went ("" for a change that is
// not of a hint between two booleans).
func hintDrift(ch Change) string {
	safe, ok := safeHint[ch.Field]
	if !ok || ch.Kind != Changed || (ch.New != "true" && ch.New != "false") || (ch.Old != "true" && ch.Old != "false") {
		return ""
	}
	if (ch.New == "true") == safe {
		return DriftLoosened
	}
	return DriftTightened
}

// Rug-pull notes on a tool's annotations.
const (
	NoteTurnedDestructive = "a read-only tool turned destructive"
	NoteNowDestructive    = "a non-destructive tool turned destructive"
	NoteNoLongerReadOnly  = "a read-only tool is no longer read-only"
)

// Thresholds decide which duration shifts a call comparison reports: the
// median latency of a (tool, arguments) group must move by at least MinShift
// and by at least Ratio times (B over A, or A over B).
type Thresholds struct {
	MinShift time.Duration
	Ratio    float64
}

// DefaultThresholds are those of sonde diff: 100ms and 1.5 times.
var DefaultThresholds = Thresholds{MinShift: 100 * time.Millisecond, Ratio: 1.5}

// Call comparison kinds.
const (
	CallOnlyA  = "only-a"
	CallOnlyB  = "only-b"
	CallStatus = "status"
	CallSlower = "slower"
	CallFaster = "faster"
)

// CallChange is a difference between the calls of a tool with the same
// arguments in the two sessions.
type CallChange struct {
	Tool string `json:"tool"`
	Args string `json:"arguments"`
	Kind string `json:"kind"`
	// Old and New are the outcomes ("resolved×2, tool-error×1").
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// OldMedian and NewMedian are the median latencies (ns in JSON).
	OldMedian time.Duration `json:"old_median,omitempty"`
	NewMedian time.Duration `json:"new_median,omitempty"`
}

// CostChange is a tool whose context cost differs.
type CostChange struct {
	Name string    `json:"name"`
	Old  *ToolCost `json:"old,omitempty"`
	New  *ToolCost `json:"new,omitempty"`
}

// Report is the comparison of two sessions.
type Report struct {
	Changes []Change     `json:"changes"`
	Calls   []CallChange `json:"calls"`
	// Costs lists the tools whose definition or result bytes differ;
	// OldTotal and NewTotal sum every tool of each side.
	Costs    []CostChange `json:"costs"`
	OldTotal ToolCost     `json:"old_total"`
	NewTotal ToolCost     `json:"new_total"`
	// ANoToolList and BNoToolList say a side never listed its tools
	// (no tools/list answer in the capture): the tools' definitions and
	// their cost are then not compared, rather than every tool of the
	// other side reported gone or new.
	ANoToolList bool `json:"a_no_tool_list,omitempty"`
	BNoToolList bool `json:"b_no_tool_list,omitempty"`
}

// Differs reports whether anything differs.
func (r *Report) Differs() bool { return len(r.Changes)+len(r.Calls) > 0 }

// Compare compares session a (the old) to b (the new). Lists a side never
// fetched are not compared.
func Compare(a, b *Shown, th Thresholds) *Report {
	r := &Report{Changes: []Change{}, Calls: []CallChange{}, Costs: []CostChange{}}
	if a.Server.Name != b.Server.Name && a.Server.Name != "" && b.Server.Name != "" {
		r.Changes = append(r.Changes, Change{Section: SectionServer, Kind: Changed, Field: "name", Old: a.Server.Name, New: b.Server.Name})
	}
	if a.Server.Version != b.Server.Version {
		r.Changes = append(r.Changes, Change{Section: SectionServer, Kind: Changed, Field: "version", Old: a.Server.Version, New: b.Server.Version})
	}
	if a.Protocol != b.Protocol {
		r.Changes = append(r.Changes, Change{Section: SectionServer, Kind: Changed, Field: "protocolVersion", Old: a.Protocol, New: b.Protocol})
	}
	r.Changes = appendFields(r.Changes, SectionCapabilities, "", a.Capabilities, b.Capabilities, nil)
	lists := []struct {
		list, section string
		a, b          []Item
		norm          func(any) any
	}{
		{"tools", SectionTool, a.Tools, b.Tools, NormalizeTool},
		{"prompts", SectionPrompt, a.Prompts, b.Prompts, nil},
		{"resources", SectionResource, a.Resources, b.Resources, nil},
		{"templates", SectionTemplate, a.Templates, b.Templates, nil},
	}
	for _, l := range lists {
		if a.Listed[l.list] && b.Listed[l.list] {
			r.Changes = append(r.Changes, CompareItems(l.section, l.a, l.b, l.norm)...)
		}
	}
	r.Calls = compareCalls(a.Groups, b.Groups, th)
	r.compareCosts(a, b)
	return r
}

// CompareItems compares two listings item by item (by key): added, removed,
// and, for an item in both, every field that differs after norm (if not
// nil) has put in the defaults of the spec.
func CompareItems(section string, a, b []Item, norm func(any) any) []Change {
	var out []Change
	for _, ia := range a {
		ib, ok := surface.Find(b, ia.Key)
		if !ok {
			out = append(out, Change{Section: section, Key: ia.Key, Kind: Removed, Old: string(ia.Def)})
			continue
		}
		out = appendFields(out, section, ia.Key, ia.Def, ib.Def, norm)
	}
	for _, ib := range b {
		if _, ok := surface.Find(a, ib.Key); !ok {
			out = append(out, Change{Section: section, Key: ib.Key, Kind: Added, New: string(ib.Def)})
		}
	}
	return out
}

// appendFields appends the field changes between two JSON values.
func appendFields(out []Change, section, key string, a, b json.RawMessage, norm func(any) any) []Change {
	va, okA := decode(orEmpty(a))
	vb, okB := decode(orEmpty(b))
	if !okA || !okB {
		if string(a) != string(b) {
			out = append(out, Change{Section: section, Key: key, Kind: Changed, Old: string(a), New: string(b)})
		}
		return out
	}
	if norm != nil {
		va, vb = norm(va), norm(vb)
	}
	var fields []Change
	walk(&fields, "", va, vb)
	if len(fields) > maxFieldChanges {
		fields = append(fields[:maxFieldChanges], Change{Field: "…", Note: fmt.Sprintf("%d more fields differ", len(fields)-maxFieldChanges)})
	}
	note := rugPull(va, vb)
	for i := range fields {
		fields[i].Section, fields[i].Key = section, key
		fields[i].Drift = hintDrift(fields[i])
		if note != "" && strings.HasPrefix(fields[i].Field, "annotations.") && fields[i].Note == "" {
			fields[i].Note, note = note, ""
		}
	}
	return append(out, fields...)
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

// walk compares two decoded JSON values, recording each differing leaf.
func walk(out *[]Change, path string, a, b any) {
	oa, aObj := a.(map[string]any)
	ob, bObj := b.(map[string]any)
	if aObj && bObj {
		keys := slices.Sorted(maps.Keys(oa))
		for k := range ob {
			if _, ok := oa[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			va, inA := oa[k]
			vb, inB := ob[k]
			p := join(path, k)
			switch {
			case !inA:
				*out = append(*out, Change{Kind: Added, Field: p, New: text(vb)})
			case !inB:
				*out = append(*out, Change{Kind: Removed, Field: p, Old: text(va)})
			default:
				walk(out, p, va, vb)
			}
		}
		return
	}
	la, aArr := a.([]any)
	lb, bArr := b.([]any)
	if aArr && bArr && len(la) == len(lb) {
		for i := range la {
			walk(out, path+"["+strconv.Itoa(i)+"]", la[i], lb[i])
		}
		return
	}
	if ta, tb := text(a), text(b); ta != tb {
		*out = append(*out, Change{Kind: Changed, Field: path, Old: ta, New: tb})
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func text(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Spec defaults of a tool's annotations (ToolAnnotations) and execution.
var annotationDefaults = map[string]any{
	"readOnlyHint":    false,
	"destructiveHint": true,
	"idempotentHint":  false,
	"openWorldHint":   true,
}

// NormalizeTool puts the spec's defaults into a decoded tool definition so
// that a hint left out compares equal to the hint at its default:
// annotations readOnlyHint false, destructiveHint true, idempotentHint
// false, openWorldHint true; execution.taskSupport "forbidden". It returns
// a copy of the parts it changes.
func NormalizeTool(v any) any {
	t, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(t)
	ann, _ := t["annotations"].(map[string]any)
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]any{}
	}
	for k, d := range annotationDefaults {
		if _, ok := ann[k]; !ok {
			ann[k] = d
		}
	}
	out["annotations"] = ann
	ex, _ := t["execution"].(map[string]any)
	ex = maps.Clone(ex)
	if ex == nil {
		ex = map[string]any{}
	}
	if _, ok := ex["taskSupport"]; !ok {
		ex["taskSupport"] = "forbidden"
	}
	out["execution"] = ex
	return out
}

// hints returns a normalized tool's readOnlyHint and destructiveHint.
func hints(v any) (readOnly, destructive bool) {
	t, _ := v.(map[string]any)
	ann, _ := t["annotations"].(map[string]any)
	readOnly, _ = ann["readOnlyHint"].(bool)
	destructive, _ = ann["destructiveHint"].(bool)
	return readOnly, destructive
}

// rugPull names a change of a tool's hints toward more harm, or "".
func rugPull(a, b any) string {
	if _, ok := a.(map[string]any); !ok {
		return ""
	}
	roA, deA := hints(a)
	roB, deB := hints(b)
	switch {
	case roA && !roB && deB:
		return NoteTurnedDestructive
	case roA && !roB:
		return NoteNoLongerReadOnly
	case !roA && !deA && !roB && deB:
		return NoteNowDestructive
	}
	return ""
}

// RugPull reports, for a tool defined as a and then as b (compact JSON),
// the note of a change toward more harm ("" if none).
func RugPull(a, b json.RawMessage) string {
	va, okA := decode(a)
	vb, okB := decode(b)
	if !okA || !okB {
		return ""
	}
	return rugPull(NormalizeTool(va), NormalizeTool(vb))
}

func outcomes(g *CallGroup) string {
	keys := slices.Sorted(maps.Keys(g.Outcomes))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, g.Outcomes[k])
	}
	return strings.Join(parts, ", ")
}

// dominant is the most frequent outcome (the first in name order on a tie).
func dominant(g *CallGroup) string {
	best, n := "", -1
	for _, k := range slices.Sorted(maps.Keys(g.Outcomes)) {
		if g.Outcomes[k] > n {
			best, n = k, g.Outcomes[k]
		}
	}
	return best
}

func compareCalls(a, b []*CallGroup, th Thresholds) []CallChange {
	out := []CallChange{}
	key := func(g *CallGroup) string { return g.Tool + "\x00" + g.Args }
	inB := map[string]*CallGroup{}
	for _, g := range b {
		inB[key(g)] = g
	}
	inA := map[string]bool{}
	for _, ga := range a {
		inA[key(ga)] = true
		gb := inB[key(ga)]
		if gb == nil {
			out = append(out, CallChange{Tool: ga.Tool, Args: ga.Args, Kind: CallOnlyA, Old: outcomes(ga), OldMedian: ga.Median()})
			continue
		}
		if dominant(ga) != dominant(gb) {
			out = append(out, CallChange{Tool: ga.Tool, Args: ga.Args, Kind: CallStatus, Old: outcomes(ga), New: outcomes(gb), OldMedian: ga.Median(), NewMedian: gb.Median()})
			continue
		}
		if dominant(ga) != string(client.StateResolved) && dominant(ga) != OutcomeToolError {
			continue // a timeout's latency is the deadline
		}
		ma, mb := ga.Median(), gb.Median()
		if kind := shift(ma, mb, th); kind != "" {
			out = append(out, CallChange{Tool: ga.Tool, Args: ga.Args, Kind: kind, Old: outcomes(ga), New: outcomes(gb), OldMedian: ma, NewMedian: mb})
		}
	}
	for _, gb := range b {
		if !inA[key(gb)] {
			out = append(out, CallChange{Tool: gb.Tool, Args: gb.Args, Kind: CallOnlyB, New: outcomes(gb), NewMedian: gb.Median()})
		}
	}
	return out
}

// shift says whether a median moved past the thresholds: CallSlower,
// CallFaster or "".
func shift(a, b time.Duration, th Thresholds) string {
	d := b - a
	if d < 0 {
		d = -d
	}
	if d < th.MinShift {
		return ""
	}
	lo, hi := min(a, b), max(a, b)
	if lo > 0 && float64(hi) < th.Ratio*float64(lo) {
		return ""
	}
	if b > a {
		return CallSlower
	}
	return CallFaster
}

func (r *Report) compareCosts(a, b *Shown) {
	ca, cb := Costs(a), Costs(b)
	r.OldTotal, r.NewTotal = TotalCost(ca), TotalCost(cb)
	r.ANoToolList, r.BNoToolList = !a.Listed[surface.Tools], !b.Listed[surface.Tools]
	if r.ANoToolList || r.BNoToolList {
		return // nothing to compare the definitions with
	}
	byName := func(cs []ToolCost, name string) *ToolCost {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
		return nil
	}
	for i := range ca {
		o, n := &ca[i], byName(cb, ca[i].Name)
		if n == nil || n.Def != o.Def || n.Description != o.Description || n.InputSchema != o.InputSchema || n.OutputSchema != o.OutputSchema || n.Results != o.Results {
			r.Costs = append(r.Costs, CostChange{Name: o.Name, Old: o, New: n})
		}
	}
	for i := range cb {
		if byName(ca, cb[i].Name) == nil {
			r.Costs = append(r.Costs, CostChange{Name: cb[i].Name, New: &cb[i]})
		}
	}
}
