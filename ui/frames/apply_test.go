package frames

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestApplyEvicts(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{Capacity: 5})
	m.SetSize(78, 20)
	m.Apply(session())
	if m.Len() != 5 || m.Evicted() != 13 {
		t.Fatalf("Len %d Evicted %d, want 5 and 13", m.Len(), m.Evicted())
	}
	if got := seqs(m); !equal(got, []uint64{14, 15, 16, 17, 18}) {
		t.Errorf("kept %v, want the newest five", got)
	}
	if got, want := m.Title(), "Frames 5 · 13 evicted · follow"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if selectSeq(m, 3) {
		t.Errorf("selectSeq found evicted frame 3")
	}
	if !selectSeq(m, 15) || selSeq(m) != 15 || m.Following() {
		t.Errorf("selectSeq(15): selected %d following %v", selSeq(m), m.Following())
	}
}

func TestApplyIgnoresOtherEvents(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.Apply([]client.Event{
		{Seq: 1, Kind: client.EvStderr, Stderr: []byte("hello\n")},
		{Seq: 2, Kind: client.EvRequest, Req: &client.ReqInfo{ID: jsonrpc.Int(1), State: client.StateSent}},
		{Seq: 3, Kind: client.EvFrame},
		{Seq: 4, Kind: client.EvNote, Note: "x"},
	})
	if m.Len() != 0 || m.Title() != "Frames 0 · follow" {
		t.Errorf("Len %d title %q after non-frame events", m.Len(), m.Title())
	}
}

func TestReset(t *testing.T) {
	m := newModel(t, 78, 20)
	m.FilterID(jsonrpc.Int(3))
	press(m, "enter")
	m.Reset()
	if m.Len() != 0 || m.Evicted() != 0 || m.flt.active() || m.InDetail() || !m.Following() || !m.t0.IsZero() {
		t.Fatalf("Reset kept state: len %d filter %v detail %v follow %v", m.Len(), m.flt.active(), m.InDetail(), m.Following())
	}
	m.Apply(session()[3:5])
	if got := seqs(m); !equal(got, []uint64{4, 5}) || !m.t0.Equal(start.Add(15e6)) {
		t.Errorf("after Reset: rows %v t0 %v", got, m.t0)
	}
}

// TestFilterExtends checks that new frames are matched on their own (old
// matches are not re-run) and that the result equals a full re-run.
func TestFilterExtends(t *testing.T) {
	for _, q := range []string{"res", "tools", "in id 3", "out", "malformed", "zzz"} {
		for _, capacity := range []int{4, 7, 100} {
			m := New(theme.New(theme.NoColor()), Options{Capacity: capacity})
			m.SetSize(78, 20)
			evs := session()
			m.Apply(evs[:2])
			press(m, "/")
			typeText(m, q)
			press(m, "enter")
			for i := 2; i < len(evs); i += 3 {
				m.Apply(evs[i:min(i+3, len(evs))])
			}
			inc := append([]uint64(nil), m.flt.matches...)
			m.refilter(false)
			if !equal(inc, m.flt.matches) {
				t.Errorf("query %q capacity %d: incremental %v, full %v", q, capacity, inc, m.flt.matches)
			}
		}
	}

	m := newModel(t, 78, 20)
	press(m, "/")
	typeText(m, "tools/list")
	if got := seqs(m); !equal(got, []uint64{4}) {
		t.Fatalf("tools/list: %v", got)
	}
	m.ring.at(m.flt.matches[0]).search = "nothing" // a re-run would drop it
	m.Apply([]client.Event{frameEv(19, 0, 2, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, client.VerdictSent, "")})
	if got := seqs(m); !equal(got, []uint64{4, 19}) {
		t.Errorf("Apply re-ran the filter over old frames or missed the new one: %v", got)
	}
}

// TestFilterNarrows checks that extending a query (which only narrows the
// previous matches) gives what a full run gives.
func TestFilterNarrows(t *testing.T) {
	m := newModel(t, 78, 20)
	press(m, "/")
	for _, q := range []string{"in id 3 response", "out id 1 request sent", "notifications/progress"} {
		press(m, "esc")
		press(m, "/")
		for i := range q {
			typeText(m, q[i:i+1])
			narrowed := append([]uint64(nil), m.flt.matches...)
			m.refilter(false)
			if !equal(narrowed, m.flt.matches) {
				t.Errorf("query %q: narrowed %v, full %v", q[:i+1], narrowed, m.flt.matches)
			}
		}
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// HTTP exchanges and stream events are rows of their own: marked ~> / <~,
// labelled by method and status, tied to their request id, jumped to by n
// when they failed, hidden and shown again with x, and opened with their
// headers.
func TestHTTPRows(t *testing.T) {
	m := newModel(t, 120, 20)
	m.Reset()
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	req := session()[0] // a frame, so HTTP rows sit among frames
	req.Seq = 1
	m.Apply([]client.Event{
		req,
		{Seq: 2, Time: at(10), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 200, Stream: "POST 1", ReqID: jsonrpc.Int(1),
			Header: []string{"> Authorization: Bearer «redacted»", "< Content-Type: text/event-stream", "< Mcp-Session-Id: abc"}}},
		{Seq: 3, Time: at(11), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Stream: "POST 1", ReqID: jsonrpc.Int(1), EventID: "e1", Raw: []byte("id: e1\ndata: \n\n"), Note: "priming event (id, empty data); id e1"}},
		{Seq: 4, Time: at(20), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 404, Stream: "POST 2", ReqID: jsonrpc.Int(2)}},
	})
	if m.Len() != 4 {
		t.Fatalf("Len %d, want 4 rows", m.Len())
	}
	view := ansi.Strip(m.View())
	for _, want := range []string{"~> 1", "POST 200", "<~ 1", "sse", ">!", "POST 404", "http", "[POST 1]"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	// n from the top stops at the failed exchange only.
	press(m, "g")
	press(m, "n")
	if selSeq(m) != 4 {
		t.Errorf("n selected seq %d, want the 404 (4)", selSeq(m))
	}
	// The id chip of request 1 keeps its frame and its HTTP rows.
	m.FilterID(jsonrpc.Int(1))
	if m.count() != 3 {
		t.Errorf("id 1 filter: %d rows, want 3", m.count())
	}
	m.FilterID(jsonrpc.ID{})
	press(m, "x")
	if m.count() != 1 || !strings.Contains(m.Title(), "no http") {
		t.Errorf("x: %d rows, title %q", m.count(), m.Title())
	}
	press(m, "esc") // clears filters but not the choice to hide HTTP rows
	if m.count() != 1 {
		t.Errorf("esc showed HTTP rows again: %d rows", m.count())
	}
	press(m, "x")
	if m.count() != 4 {
		t.Fatalf("x again: %d rows", m.count())
	}
	if !selectSeq(m, 2) {
		t.Fatal("no row 2")
	}
	press(m, "enter")
	detail := ansi.Strip(m.View())
	for _, want := range []string{"POST http://127.0.0.1:1/mcp", "200", "Bearer «redacted»", "Mcp-Session-Id: abc", "stream POST 1"} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
}

// Authorization discovery's GETs are HTTP rows like the others: a 404 to a
// well-known URI is a problem n stops at, and the detail shows the note and
// the start of the metadata body.
func TestAuthDiscoveryRows(t *testing.T) {
	m := newModel(t, 120, 30)
	m.Reset()
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	m.Apply([]client.Event{
		{Seq: 1, Time: at(1), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "POST", URL: "http://127.0.0.1:1/mcp", Status: 401, Stream: "POST 1", ReqID: jsonrpc.Int(1),
			Header: []string{`< Www-Authenticate: Bearer scope="s"`}}},
		{Seq: 2, Time: at(2), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "GET", URL: "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp", Status: 404, Stream: "auth", ReqID: jsonrpc.Int(1),
			Note: "protected resource metadata (well-known URI 1 of 2): GET …: HTTP 404"}},
		{Seq: 3, Time: at(3), Kind: client.EvHTTP, HTTP: &client.HTTPEvent{Method: "GET", URL: "http://127.0.0.1:1/.well-known/oauth-protected-resource", Status: 200, Stream: "auth", ReqID: jsonrpc.Int(1),
			Header: []string{"> Accept: application/json", "< Content-Type: application/json"}, Raw: []byte(`{"resource":"http://127.0.0.1:1"}`),
			Note: "protected resource metadata (well-known URI 2 of 2): resource http://127.0.0.1:1; authorization servers (none)"}},
	})
	view := ansi.Strip(m.View())
	for _, want := range []string{"GET 404", "GET 200", "[auth]"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	press(m, "g")
	press(m, "n")
	press(m, "n")
	if selSeq(m) != 2 {
		t.Errorf("n selected seq %d, want the 404 (2)", selSeq(m))
	}
	if !selectSeq(m, 3) {
		t.Fatal("no row 3")
	}
	press(m, "enter")
	detail := ansi.Strip(m.View())
	for _, want := range []string{"GET http://127.0.0.1:1/.well-known/oauth-protected-resource", "well-known URI 2 of 2", "> Accept: application/json",
		"bytes of the body", `"resource":"http://127.0.0.1:1"`} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
}

// A note of sonde tap --fault saying what a rule did is a row of its own,
// marked *, in the direction it names, which n stops at; other notes are
// not rows.
func TestFaultRows(t *testing.T) {
	m := newModel(t, 160, 20)
	m.Reset()
	req := session()[0]
	req.Seq = 1
	m.Apply([]client.Event{
		req,
		{Seq: 2, Time: start.Add(5 * time.Millisecond), Kind: client.EvNote, Note: "fault rule 1: drop:to-host,id=1"},
		{Seq: 3, Time: start.Add(10 * time.Millisecond), Kind: client.EvNote, Note: "fault rule 1 (drop:to-host,id=1) dropped the response to id 1 (initialize) to-host",
			Fault: &client.Fault{Rule: 1, Action: "drop", Dir: client.In, Kind: jsonrpc.KindResponse, ID: jsonrpc.Int(1), Method: "initialize"}},
	})
	if m.Len() != 2 {
		t.Fatalf("Len %d, want 2 rows", m.Len())
	}
	view := ansi.Strip(m.View())
	for _, want := range []string{"*", "<-", "fault rule 1", "fault (drop:to-host,id=1) dropped the response to id 1"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	press(m, "g")
	press(m, "n")
	if selSeq(m) != 3 {
		t.Errorf("n selected seq %d, want the fault row (3)", selSeq(m))
	}
	press(m, "enter")
	if detail := ansi.Strip(m.View()); !strings.Contains(detail, "dropped the response") {
		t.Errorf("detail:\n%s", detail)
	}
}

// A request sonde injected into a tapped session (its id "sonde-PID-N")
// and its answer are marked i; the detail says the host never saw the
// answer. A host's string id of another shape is not marked.
func TestInjectedRows(t *testing.T) {
	m := newModel(t, 160, 20)
	m.Reset()
	m.Apply([]client.Event{
		frameEv(1, 0, client.Out, `{"jsonrpc":"2.0","id":"sonde-42-1","method":"ping"}`, client.VerdictSent, ""),
		frameEv(2, time.Millisecond, client.In, `{"jsonrpc":"2.0","id":"sonde-42-1","result":{}}`, client.VerdictResolved, `resolved id "sonde-42-1" after 1ms`),
		frameEv(3, 2*time.Millisecond, client.Out, `{"jsonrpc":"2.0","id":"sonde-x","method":"ping"}`, client.VerdictSent, ""),
	})
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	var marked []string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, ">"), "i ") || strings.HasPrefix(l, " i") {
			marked = append(marked, l)
		}
	}
	if len(marked) != 2 {
		t.Fatalf("%d rows marked i, want 2:\n%s", len(marked), strings.Join(lines, "\n"))
	}
	press(m, "g")
	press(m, "enter")
	if detail := ansi.Strip(m.View()); !strings.Contains(detail, "injected by sonde") {
		t.Errorf("detail:\n%s", detail)
	}
}

// TestServersTagged: the same exchange from two servers, interleaved by
// batch (as the aggregated inspector applies them): each row tagged, the
// lint rules run per server (no finding from the other's ids), an id's
// frames are that server's, and SetServer shows one server's rows.
func TestServersTagged(t *testing.T) {
	single := New(theme.New(theme.NoColor()), Options{})
	single.Apply(session()[:12])
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(118, 30)
	// Both servers' id 3 is in flight at once (frame 7, then 8 to 11:
	// its error, a string id "3" and a second answer, which the rules
	// flag only while they follow each server's ids apart).
	for _, batch := range [][2]int{{0, 3}, {3, 6}, {6, 7}, {7, 12}} {
		for _, srv := range []string{"alpha", "beta"} {
			m.SetTag(srv)
			m.Apply(session()[batch[0]:batch[1]])
		}
	}
	if m.Len() != 24 {
		t.Fatalf("Len %d, want 24", m.Len())
	}
	var want []string
	for _, mk := range marks(single) {
		want = append(want, mk, mk)
	}
	if len(want) < 6 {
		t.Fatalf("one server's marks %v: the exchange breaks fewer rules than the test needs", marks(single))
	}
	got := marks(m)
	slices.Sort(got)
	slices.Sort(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("lint marks with two servers %v, want each of one server's twice %v", got, want)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "server") || !strings.Contains(view, "alpha  -> 1") || !strings.Contains(view, "beta   -> 1") {
		t.Errorf("rows not tagged:\n%s", view)
	}
	m.FilterRequest("beta", jsonrpc.Int(2))
	if got := seqs(m); !equal(got, []uint64{4, 6}) || m.ring.at(m.absAt(0)).srv != "beta" || m.ring.at(m.absAt(1)).srv != "beta" {
		t.Errorf("beta's id 2: rows %v", got)
	}
	if got := m.Title(); !strings.Contains(got, "filter: beta id 2") {
		t.Errorf("title %q", got)
	}
	m.clearFilter()
	m.SetServer("alpha")
	if m.count() != 12 || !strings.Contains(m.Title(), "filter: server alpha") {
		t.Errorf("alpha only: %d rows, title %q", m.count(), m.Title())
	}
	for i := range m.count() {
		if e := m.ring.at(m.absAt(i)); e.srv != "alpha" {
			t.Fatalf("row %d is %s's", i, e.srv)
		}
	}
	m.SetServer("")
	m.SetSize(40, 30)
	if view := ansi.Strip(m.View()); strings.Contains(view, "alpha") {
		t.Errorf("narrow: the server column still shows:\n%s", view)
	}
}

// TestServersLintApart: the rules follow each server's session. beta asks
// for sampling before its own handshake is over, after alpha's is: a
// linter shared by both would take alpha's handshake for beta's.
func TestServersLintApart(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetTag("alpha")
	m.Apply(session()[:4])
	m.SetTag("beta")
	m.Apply(append(session()[:2:2], frameEv(3, 14*time.Millisecond, client.In,
		`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`, client.VerdictServerRequest, "request from the server: sampling/createMessage")))
	found := false
	for abs := m.ring.oldest(); abs < m.ring.total(); abs++ {
		if e := m.ring.at(abs); e.srv == "beta" && e.seq == 3 {
			for _, f := range e.lint {
				found = found || f.Rule == "request-before-initialize"
			}
		}
	}
	if !found {
		t.Errorf("beta's early request is not flagged: %v", marks(m))
	}
}
