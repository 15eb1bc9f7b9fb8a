package filter

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

func TestParseAndMatch(t *testing.T) {
	call := &Item{Method: "tools/call", Tool: "search_docs", ID: "7", Dir: "out", Kind: "request",
		Status: []string{"timeout"}, Failed: true, Duration: 2 * time.Second, HasDuration: true,
		Payload: []byte(`{"name":"search_docs","arguments":{"q":"Tides"}}`)}
	note := &Item{Method: "notifications/progress", Dir: "in", Kind: "notification", Status: []string{"progress"}}
	toolErr := &Item{Method: "tools/call", Tool: "fail", ID: `"a-1"`, Dir: "out", Status: []string{"resolved", "isError"}, IsError: true}
	for _, tc := range []struct {
		q                     string
		call, note, toolError bool
	}{
		{"", true, true, true},
		{"method:tools/call", true, false, true},
		{"method:TOOLS", true, false, true},
		{"tool:search", true, false, false},
		{"status:error", true, false, true},
		{"status:iserror", false, false, true},
		{"status:timeout", true, false, false},
		{"id:7", true, false, false},
		{"id:a-1", false, false, true},
		{`id:"a-1"`, false, false, true},
		{"dir:in", false, true, false},
		{"kind:notification", false, true, false},
		{"duration:>500ms", true, false, false},
		{"duration:<500ms", false, false, false},
		{"duration:>=2s", true, false, false},
		{"tides", true, false, false},
		{"progress", false, true, false},
		{"method:tools/call -status:timeout", false, false, true},
		{`"search_docs" status:error`, true, false, false},
	} {
		f, err := Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		for _, c := range []struct {
			name string
			it   *Item
			want bool
		}{{"call", call, tc.call}, {"note", note, tc.note}, {"toolError", toolErr, tc.toolError}} {
			if got := f.Match(c.it); got != c.want {
				t.Errorf("%q on %s: %v, want %v", tc.q, c.name, got, c.want)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		q    string
		pos  int
		want string
	}{
		{"methd:x", 0, `unknown field "methd"`},
		{"dir:sideways", 4, "dir is in or out"},
		{"duration:500ms", 9, "needs a comparison"},
		{"duration:>fast", 10, `"fast" is not a duration`},
		{`tool:"open`, 5, "not closed"},
		{"kind:x", 5, "kind is"},
		{"tool:", 0, "without a value"},
	} {
		_, err := Parse(tc.q)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Fatalf("Parse(%q) = %v, want a SyntaxError", tc.q, err)
		}
		if se.Pos != tc.pos || !strings.Contains(se.Error(), tc.want) {
			t.Errorf("Parse(%q): %v at %d, want %q at %d", tc.q, se, se.Pos, tc.want, tc.pos)
		}
	}
}

// FuzzParse: Parse never panics; an error is a SyntaxError inside the
// query; a parsed filter matches an empty item without panicking, and
// parsing its source again gives the same terms.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"method:tools/call tool:search status:error id:7 dir:in kind:notification duration:>500ms text",
		`-status:late "two words"`, "duration:<=1s", `id:"x"`, "-", ":", `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			return
		}
		flt.Match(&Item{})
		flt.Match(&Item{Method: s, Payload: []byte(s), HasDuration: true})
		again, err := Parse(flt.String())
		if err != nil || len(again.terms) != len(flt.terms) {
			t.Fatalf("Parse(%q) again: %v", s, err)
		}
	})
}

// TestLiveRequestsBounded: a live index judges a response by its request,
// and forgets the oldest requests past its limit.
func TestLiveRequestsBounded(t *testing.T) {
	r := NewLiveRequests(2)
	req := func(id int64) client.Event {
		return client.Event{Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(id), Method: "tools/call", Tool: "echo", State: client.StateResolved}}
	}
	resp := func(id int64) client.Event {
		f := client.FrameInfo{}
		f.Dir, f.Msg.Kind, f.Msg.ID = client.In, jsonrpc.KindResponse, jsonrpc.Int(id)
		return client.Event{Kind: client.EvFrame, Frame: &f}
	}
	for id := int64(1); id <= 3; id++ {
		r.Learn(req(id))
	}
	if it, _ := r.ItemAt(resp(3), r.Gen()); it.Tool != "echo" || it.Method != "tools/call" || !it.HasDuration {
		t.Fatalf("the response of id 3: %+v", it)
	}
	if it, _ := r.ItemAt(resp(1), r.Gen()); it.Tool != "" || len(r.reqs) != 2 {
		t.Fatalf("id 1 not forgotten: %+v, %d held", it, len(r.reqs))
	}
}

// TestStatusErrorIsClientErrored: status:error is client.Errored, the one
// definition of an error: the caller's cancel is status:cancelled, not an
// error; a timeout and a JSON-RPC error are errors.
func TestStatusErrorIsClientErrored(t *testing.T) {
	isErr, err := Parse("status:error")
	if err != nil {
		t.Fatal(err)
	}
	cancelled, _ := Parse("status:cancelled")
	for _, tc := range []struct {
		state client.State
		want  bool
	}{{client.StateCancelled, false}, {client.StateTimeout, true}, {client.StateError, true}, {client.StateResolved, false}} {
		r := NewRequests()
		ev := client.Event{Kind: client.EvRequest, Req: &client.ReqInfo{Dir: client.Out, ID: jsonrpc.Int(1), Method: "tools/call", State: tc.state}}
		r.Learn(ev)
		r.Rewind()
		it, _ := r.Item(ev)
		if got := isErr.Match(&it); got != tc.want {
			t.Errorf("%s: status:error %v, want %v", tc.state, got, tc.want)
		}
		if got := cancelled.Match(&it); got != (tc.state == client.StateCancelled) {
			t.Errorf("%s: status:cancelled %v", tc.state, got)
		}
	}
}
