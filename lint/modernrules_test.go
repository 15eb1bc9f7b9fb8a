package lint

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// withFrames returns the events of a sample with the frames at the given
// seqs replaced by raw (bytes and message both; requests or responses).
func withFrames(t *testing.T, sample string, raws map[uint64]string) []client.Event {
	t.Helper()
	evs := capturetest.Events(t, "../testdata/captures/lint/"+sample)
	for i, ev := range evs {
		raw, ok := raws[ev.Seq]
		if !ok {
			continue
		}
		if ev.Frame == nil {
			t.Fatalf("%s seq %d is not a frame", sample, ev.Seq)
		}
		msg, err := jsonrpc.Decode([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		fr := *ev.Frame
		fr.Raw, fr.Msg = []byte(raw), msg
		evs[i].Frame = &fr
		delete(raws, ev.Seq)
	}
	if len(raws) != 0 {
		t.Fatalf("%s has no frame at %v", sample, raws)
	}
	return evs
}

// want checks that fs is exactly one finding of rule at seq whose detail
// says what ("" for no finding at all).
func wantOne(t *testing.T, fs []Finding, rule string, seq uint64, what string) {
	t.Helper()
	if what == "" {
		if len(fs) != 0 {
			t.Fatalf("findings %+v, want none", fs)
		}
		return
	}
	if len(fs) != 1 || fs[0].Rule != rule || fs[0].Seq != seq || !strings.Contains(fs[0].Detail, what) {
		t.Fatalf("findings %+v, want one %s at seq %d saying %q", fs, rule, seq, what)
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestRequestState: the MRTR chain of request-state.jsonl (seq 5 asks for
// input with requestState "s-1", seq 6 retries) with the retry's state
// echoed, changed, missing or invented.
func TestRequestState(t *testing.T) {
	retry := func(state string) string {
		return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete","arguments":{},"inputResponses":{"ok":{"action":"accept"}}` + state + `,` + modernMeta + `}}`
	}
	ask := func(state string) string {
		return `{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{}}}` + state + `}}`
	}
	cases := []struct {
		name   string
		frames map[uint64]string
		want   string
	}{
		{"echoed", map[uint64]string{6: retry(`,"requestState":"s-1"`)}, ""},
		{"echoed-object", map[uint64]string{5: ask(`,"requestState":{"b":1,"a":[2]}`), 6: retry(`,"requestState":{"a":[2],"b":1}`)}, ""},
		{"changed", map[uint64]string{6: retry(`,"requestState":"s-2"`)}, "differs from the one the input_required answer (event 5) gave"},
		{"changed-type", map[uint64]string{6: retry(`,"requestState":1`)}, "differs"},
		{"missing", map[uint64]string{6: retry(``)}, "the retry carries no requestState; the input_required answer (event 5) gave one"},
		{"none-none", map[uint64]string{5: ask(``), 6: retry(``)}, ""},
		{"invented-after-none", map[uint64]string{5: ask(``), 6: retry(`,"requestState":"x"`)}, "gave none"},
		{"invented", map[uint64]string{5: `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}`, 6: retry(`,"requestState":"x"`)}, "no input_required answer gave (invented)"},
		{"other-tool", map[uint64]string{6: strings.Replace(retry(`,"requestState":"z"`), `"delete"`, `"other"`, 1)}, "invented"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantOne(t, lintAll(withFrames(t, "request-state.jsonl", tc.frames)), RuleRequestState, 6, tc.want)
		})
	}
	// A recording started mid-chain cannot tell an invented state.
	evs := withFrames(t, "request-state.jsonl", map[uint64]string{6: retry(`,"requestState":"s-1"`)})
	if fs := lintAll(evs[4:]); len(fs) != 0 {
		t.Errorf("mid-session: %+v", fs)
	}
}

// TestResultType: the modern tools/call result of request-state.jsonl
// (seq 7) with resultType present, missing, unknown, or input_required
// where it may not be; and a legacy session is not held to it.
func TestResultType(t *testing.T) {
	res := func(body string) map[uint64]string {
		return map[uint64]string{7: `{"jsonrpc":"2.0","id":3,"result":{` + body + `}}`}
	}
	echoed := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete","arguments":{},"requestState":"s-1",` + modernMeta + `}}`
	cases := []struct {
		name   string
		frames map[uint64]string
		rule   string
		want   string
	}{
		{"complete", res(`"resultType":"complete","content":[]`), RuleResultType, ""},
		{"missing", res(`"content":[]`), RuleResultType, `tools/call result (2026-07-28) has no resultType`},
		{"unknown", res(`"resultType":"done","content":[]`), RuleResultType, `resultType "done", which the spec does not know`},
		{"not-a-string", res(`"resultType":1,"content":[]`), RuleResultType, "resultType is a number, not a string"},
		{"task-undeclared", res(`"resultType":"task","task":{"taskId":"t","status":"working"}`), RuleUnnegotiatedExt, `did not declare the io.modelcontextprotocol/tasks extension`},
		{"task-declared", map[uint64]string{6: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete","arguments":{},"requestState":"s-1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`,
			7: `{"jsonrpc":"2.0","id":3,"result":{"resultType":"task","task":{"taskId":"t","status":"working"}}}`}, RuleUnnegotiatedExt, ""},
		{"discover-missing", map[uint64]string{3: `{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":0,"cacheScope":"c"}}`}, RuleResultType, "server/discover result (2026-07-28) has no resultType"},
		{"discover-input-required", map[uint64]string{3: `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","ttlMs":0,"cacheScope":"c"}}`}, RuleResultType, "only tools/call, resources/read and prompts/get may ask for input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := uint64(7)
			if _, ok := tc.frames[3]; ok {
				seq = 3
			}
			if _, ok := tc.frames[6]; !ok {
				tc.frames[6] = echoed // the sample's own retry changes the state
			}
			fs := lintAll(withFrames(t, "request-state.jsonl", tc.frames))
			wantOne(t, fs, tc.rule, seq, tc.want)
		})
	}
	// The legacy sample's results have no resultType: not a finding.
	if fs := lintAll(capturetest.Events(t, "../testdata/captures/lint/list-item-type.jsonl")); len(names(fs)) != 1 {
		t.Errorf("legacy: %v", names(fs))
	}
}
