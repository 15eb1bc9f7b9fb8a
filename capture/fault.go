package capture

import (
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// faultOf is the client.Fault of a record (nil for none).
func faultOf(r *FaultRec) *client.Fault {
	if r == nil {
		return nil
	}
	f := &client.Fault{Rule: r.Rule, Action: r.Action, Dir: parseDir(r.Dir), Kind: parseKind(r.Kind), Method: r.Method}
	if r.ID != nil {
		f.ID = *r.ID
	}
	return f
}

// legacyFault reads, for a file older than 1.4 (which has no "fault"
// field), the note of a fault rule by the words sonde 1.3 wrote ("fault
// rule 2 (RULE) dropped the response to id 7 (tools/call echo) to-host",
// docs/chaos.md); nil for any other note. The rule's action is the verb;
// the kind, id and method come from the frame the note names, when it
// names one.
func legacyFault(note string) *client.Fault {
	rest, ok := strings.CutPrefix(note, "fault rule ")
	if !ok {
		return nil
	}
	num, rest, ok := strings.Cut(rest, " (")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return nil
	}
	// The rule's text is within the parentheses; a rule's text can hold
	// ") " itself only inside a message= or text= value, which the verb
	// list below does not start with.
	// The first words of what each action did, as sonde 1.3 wrote them.
	verbs := [...]struct {
		word   string
		action client.FaultAction
	}{
		{"delayed", client.FaultDelay}, {"dropped", client.FaultDrop}, {"sent", client.FaultDuplicate}, {"corrupted", client.FaultCorrupt},
		{"left", client.FaultCorrupt}, {"answered", client.FaultError}, {"wrote a noise line", client.FaultNoise},
		{"wrote to the host's stderr", client.FaultStderr}, {"stalled", client.FaultStall}, {"closed", client.FaultClose},
		{"held", client.FaultReorder}, {"released", client.FaultReorder},
	}
	var verb client.FaultAction
	found := false
	for _, v := range verbs {
		if i := strings.Index(rest, ") "+v.word+" "); i >= 0 {
			verb, rest, found = v.action, rest[i+2+len(v.word)+1:], true
			break
		}
	}
	if !found {
		return nil
	}
	// The direction is the last one the note names (the rule's own text,
	// in the parentheses, names it after a colon or a comma, not a space).
	f := &client.Fault{Rule: n, Action: verb, Dir: client.Out}
	if strings.LastIndex(note, " to-host") > strings.LastIndex(note, " to-server") {
		f.Dir = client.In
	}
	for _, k := range [...]struct {
		prefix string
		kind   jsonrpc.Kind
	}{{"the response to id ", jsonrpc.KindResponse}, {"the request id ", jsonrpc.KindRequest}} {
		i := strings.Index(rest, k.prefix)
		if i < 0 {
			continue
		}
		f.Kind = k.kind
		idText := rest[i+len(k.prefix):]
		if strings.HasPrefix(idText, `"`) {
			if q, err := strconv.QuotedPrefix(idText); err == nil {
				s, _ := strconv.Unquote(q)
				f.ID = jsonrpc.String(s)
			}
		} else {
			numText, _, _ := strings.Cut(idText, " ")
			if v, err := strconv.ParseInt(numText, 10, 64); err == nil {
				f.ID = jsonrpc.Int(v)
			}
		}
		if _, m, ok := strings.Cut(idText, " ("); ok {
			m, _, _ = strings.Cut(m, ")")
			f.Method, _, _ = strings.Cut(m, " ")
		}
		break
	}
	if f.Kind == jsonrpc.KindInvalid && strings.Contains(rest, "a notification") {
		f.Kind = jsonrpc.KindNotification
	}
	return f
}
