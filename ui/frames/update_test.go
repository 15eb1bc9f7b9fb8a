package frames

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func TestFollowMode(t *testing.T) {
	m := newModel(t, 78, 10)
	if !m.Following() || selSeq(m) != 18 {
		t.Fatalf("new pane: following=%v selected=%d, want true and 18", m.Following(), selSeq(m))
	}
	press(m, "k")
	if m.Following() || selSeq(m) != 17 {
		t.Fatalf("after k: following=%v selected=%d, want false and 17", m.Following(), selSeq(m))
	}
	m.Apply([]client.Event{note(19)})
	if selSeq(m) != 17 {
		t.Errorf("new frame moved the selection to %d without follow", selSeq(m))
	}
	press(m, "j")
	press(m, "j")
	if m.Following() {
		t.Errorf("j to the newest frame turned follow on; only G, end and f do")
	}
	press(m, "G")
	if !m.Following() || selSeq(m) != 19 {
		t.Fatalf("after G: following=%v selected=%d, want true and 19", m.Following(), selSeq(m))
	}
	m.Apply([]client.Event{note(20)})
	if selSeq(m) != 20 {
		t.Errorf("follow: selected %d after a new frame, want 20", selSeq(m))
	}
	press(m, "f")
	if m.Following() {
		t.Errorf("f did not turn follow off")
	}
	press(m, "home")
	if selSeq(m) != 1 || m.indexOf(m.top) != 0 {
		t.Errorf("home: selected %d top row %d, want 1 and 0", selSeq(m), m.indexOf(m.top))
	}
	press(m, "end")
	if !m.Following() || selSeq(m) != 20 {
		t.Errorf("end: following=%v selected=%d", m.Following(), selSeq(m))
	}
	press(m, "f")
	press(m, "f")
	if !m.Following() {
		t.Errorf("f twice: follow is off")
	}
}

func TestNavigation(t *testing.T) {
	m := newModel(t, 78, 10) // 9 rows of frames
	press(m, "g")
	steps := []struct {
		key  string
		want uint64
	}{
		{"j", 2}, {"down", 3}, {"pgdown", 12}, {"pgdown", 18}, {"pgdown", 18},
		{"up", 17}, {"pgup", 8}, {"pgup", 1}, {"k", 1}, {"G", 18},
	}
	for _, s := range steps {
		press(m, s.key)
		if got := selSeq(m); got != s.want {
			t.Fatalf("after %s: selected %d, want %d", s.key, got, s.want)
		}
		si, ti := m.indexOf(m.sel), m.indexOf(m.top)
		if si < ti || si >= ti+m.listRows() {
			t.Fatalf("after %s: selected row %d is off screen (top %d)", s.key, si, ti)
		}
	}
}

func TestNextPrevProblem(t *testing.T) {
	m := newModel(t, 78, 10)
	press(m, "g")
	var got []uint64
	for range 8 {
		press(m, "n")
		got = append(got, selSeq(m))
	}
	want := []uint64{5, 9, 10, 11, 16, 17, 17, 17} // does not wrap
	if !equal(got, want) {
		t.Errorf("n: visited %v, want %v", got, want)
	}
	press(m, "N")
	press(m, "N")
	if selSeq(m) != 11 {
		t.Errorf("N N from 17: selected %d, want 11", selSeq(m))
	}
	if m.Following() {
		t.Errorf("n/N left follow on")
	}
}

func TestMouse(t *testing.T) {
	m := newModel(t, 78, 10)
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.Following() {
		t.Errorf("wheel up left follow on")
	}
	if ti := m.indexOf(m.top); ti != 18-9-3 {
		t.Errorf("wheel up: top row %d, want %d", ti, 18-9-3)
	}
	if si := m.indexOf(m.sel); si != 18-3-1 {
		t.Errorf("wheel up: selection not dragged on screen, row %d", si)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 10, Y: 1})
	if got := selSeq(m); got != 7 {
		t.Errorf("click on the first row: selected %d, want 7", got)
	}
	m.Update(tea.MouseClickMsg{Button: tea.MouseLeft, X: 10, Y: 0}) // header
	if got := selSeq(m); got != 7 {
		t.Errorf("click on the header changed the selection to %d", got)
	}
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	m.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if ti := m.indexOf(m.top); ti != 18-9 {
		t.Errorf("wheel down twice: top row %d, want %d", ti, 18-9)
	}
}

func TestFilterTyping(t *testing.T) {
	m := newModel(t, 78, 20)
	press(m, "/")
	if !m.Capturing() {
		t.Fatal("/ did not start the filter input")
	}
	typeText(m, "tools")
	// "notificaTiOns/..." matches the fuzzy query too, and the results
	// whose payload holds the word (the capabilities, the tool list).
	if got := seqs(m); !equal(got, []uint64{2, 3, 4, 6, 7, 18}) {
		t.Errorf("query tools: rows %v", got)
	}
	press(m, "backspace")
	typeText(m, "s/call")
	if got := seqs(m); !equal(got, []uint64{7}) {
		t.Errorf("query tools/call: rows %v", got)
	}
	press(m, "q") // typed, not a command
	if m.flt.query != "tools/callq" || !m.Capturing() {
		t.Errorf("q while typing: query %q capturing %v", m.flt.query, m.Capturing())
	}
	press(m, "backspace")
	press(m, "enter")
	if m.Capturing() || m.flt.query != "tools/call" {
		t.Fatalf("enter: capturing %v query %q", m.Capturing(), m.flt.query)
	}
	if title := m.Title(); !strings.HasSuffix(title, " · filter: tools/call") {
		t.Errorf("title %q does not show the filter", title)
	}
	press(m, "f") // list keys work again; follow would jump to the newest frame
	press(m, "esc")
	if m.flt.active() || m.count() != 18 {
		t.Errorf("esc in the list did not clear the filter: %d rows", m.count())
	}
	if selSeq(m) != 7 {
		t.Errorf("clearing the filter lost the selected frame: %d", selSeq(m))
	}

	press(m, "/")
	typeText(m, "resolved")
	press(m, "esc")
	if m.Capturing() || m.flt.active() || m.count() != 18 {
		t.Errorf("esc while typing did not clear the query")
	}
}

func TestFilterID(t *testing.T) {
	m := newModel(t, 78, 20)
	m.FilterID(jsonrpc.Int(3))
	if got := seqs(m); !equal(got, []uint64{7, 8, 9, 11, 18}) {
		t.Errorf("id 3: rows %v (want request, progress, error, duplicate, cancel; not the string id)", got)
	}
	if selSeq(m) != 7 || m.Following() {
		t.Errorf("id 3: selected %d following %v, want the request and no follow", selSeq(m), m.Following())
	}
	if !strings.Contains(m.Title(), "filter: id 3") {
		t.Errorf("title %q has no id chip", m.Title())
	}
	m.FilterID(jsonrpc.String("3"))
	if got := seqs(m); !equal(got, []uint64{10}) {
		t.Errorf(`id "3": rows %v`, got)
	}
	press(m, "/")
	typeText(m, "zzz")
	press(m, "enter")
	if m.count() != 0 {
		t.Errorf("id and query combine: %v", seqs(m))
	}
	press(m, "esc")
	if m.flt.active() || m.count() != 18 {
		t.Errorf("esc did not clear the id chip")
	}
}

func TestDetail(t *testing.T) {
	m := newModel(t, 78, 8)
	press(m, "g")
	press(m, "enter")
	if !m.InDetail() || m.Capturing() {
		t.Fatalf("enter: InDetail %v Capturing %v", m.InDetail(), m.Capturing())
	}
	if text := detailText(m); !strings.Contains(text, "  \"params\": {\n    \"protocolVersion\": \"2025-06-18\",") {
		t.Errorf("detail does not pretty-print the message:\n%s", text)
	}
	press(m, "j")
	press(m, "pgdown")
	if m.det.off != 1+6 {
		t.Errorf("detail scroll offset %d, want 7", m.det.off)
	}
	press(m, "G")
	if m.det.off != len(m.det.lines)-7 {
		t.Errorf("G in detail: offset %d, lines %d", m.det.off, len(m.det.lines))
	}
	if m.Following() || selSeq(m) != 1 {
		t.Errorf("G in detail moved the list")
	}
	for _, k := range []string{"esc", "backspace"} {
		press(m, "enter")
		press(m, k)
		if m.InDetail() {
			t.Errorf("%s did not leave the detail view", k)
		}
	}
	press(m, "q")
	if m.InDetail() {
		t.Errorf("q in the list opened something")
	}
	if k := m.keys; !k.Open.Enabled() || k.Back.Enabled() {
		t.Errorf("list mode: Open enabled %v, Back enabled %v", k.Open.Enabled(), k.Back.Enabled())
	}
	press(m, "enter")
	m.Keys()
	if k := m.keys; k.Open.Enabled() || !k.Back.Enabled() || k.Filter.Enabled() {
		t.Errorf("detail mode: Open %v Back %v Filter %v", k.Open.Enabled(), k.Back.Enabled(), k.Filter.Enabled())
	}
}

func TestKeysHaveHelp(t *testing.T) {
	m := newModel(t, 78, 20)
	for _, group := range m.Keys().FullHelp() {
		for _, b := range group {
			if h := b.Help(); h.Key == "" || h.Desc == "" || len(b.Keys()) == 0 {
				t.Errorf("binding %v has no help", b.Keys())
			}
		}
	}
}

// seqs lists the event seqs of the rows of the list.
func seqs(m *Model) []uint64 {
	var out []uint64
	for i := range m.count() {
		out = append(out, m.ring.at(m.absAt(i)).seq)
	}
	return out
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// detailText is the whole detail view as plain text.
func detailText(m *Model) string {
	var b strings.Builder
	for _, l := range m.det.lines {
		for _, sp := range l {
			b.WriteString(sp.s)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestDetailRewrapsAndPaste(t *testing.T) {
	m := newModel(t, 118, 20)
	press(m, "g")
	press(m, "enter")
	wide := len(m.det.lines)
	m.SetSize(40, 20)
	if len(m.det.lines) <= wide {
		t.Errorf("detail did not rewrap for a narrower pane: %d lines, was %d", len(m.det.lines), wide)
	}
	press(m, "esc")
	press(m, "/")
	m.Update(tea.PasteMsg{Content: "tools/li"})
	if got := seqs(m); !equal(got, []uint64{4}) {
		t.Errorf("pasted query: rows %v", got)
	}
}

func TestMatchHighlight(t *testing.T) {
	m := newModel(t, 118, 20)
	press(m, "/")
	typeText(m, "tools/list")
	match := m.pen(skMatch, true) // the only row is selected
	if match.pre == "" {
		t.Fatal("the NoColor match style draws nothing")
	}
	if v := m.View(); !strings.Contains(v, match.pre+"tools/list"+match.suf) {
		t.Errorf("matched characters are not highlighted:\n%q", v)
	}
}

func TestRestyleFollowsTheSharedStyles(t *testing.T) {
	st := theme.New(theme.Dark())
	m := New(st, Options{})
	m.SetSize(60, 5)
	m.Apply([]client.Event{{Seq: 1, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In, Raw: []byte("noise")}, Verdict: client.VerdictMalformed, Detail: "not json"}}})
	dark := m.View()
	*st = *theme.New(theme.Light())
	if m.View() != dark {
		t.Fatal("the cached paints changed without Restyle")
	}
	m.Restyle()
	if m.View() == dark {
		t.Fatal("Restyle did not pick up the light palette")
	}
}

// After a restart ids start again: FilterID keeps to the current process,
// and the first frame of the new process is marked.
func TestRestartedProcessFrames(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(90, 10)
	start := client.Event{Kind: client.EvProcess, Proc: &client.ProcInfo{What: client.ProcStart, Pid: 1}}
	req := func(seq uint64) client.Event {
		f := client.Frame{Dir: client.Out, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)}
		f.Msg.Kind, f.Msg.ID, f.Msg.Method = jsonrpc.KindRequest, jsonrpc.Int(1), "initialize"
		return client.Event{Seq: seq, Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: f, Verdict: client.VerdictSent}}
	}
	m.Apply([]client.Event{start, req(1), start, req(1)})
	if m.Len() != 2 {
		t.Fatalf("%d frames", m.Len())
	}
	m.FilterID(jsonrpc.Int(1))
	if got := m.count(); got != 1 {
		t.Fatalf("id filter shows %d frames, want only the current process's one", got)
	}
	m.clearFilter()
	if v := m.View(); strings.Count(v, "↻") != 1 {
		t.Fatalf("want one restart mark:\n%s", v)
	}
}

func TestVerdictShownOnce(t *testing.T) {
	m := New(theme.New(theme.NoColor()), Options{})
	m.SetSize(140, 4)
	f := func(v client.Verdict, detail string) client.Event {
		return client.Event{Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In, Raw: []byte("{}")}, Verdict: v, Detail: detail, VerdictInDetail: strings.HasPrefix(detail, string(v)+" ")}}
	}
	m.Apply([]client.Event{f(client.VerdictResolved, "resolved id 3 after 2ms"), f(client.VerdictNotification, "notifications/tools/list_changed")})
	v := ansi.Strip(m.View())
	if strings.Contains(v, "resolved resolved") || !strings.Contains(v, "resolved id 3 after 2ms") {
		t.Fatalf("verdict repeated or detail lost:\n%s", v)
	}
	if !strings.Contains(v, "notification notifications/tools/list_changed") {
		t.Fatalf("a detail that merely starts with the verdict's letters was cut:\n%s", v)
	}
}

// A query with a field: term is the filter language (docs/filter.md).
func TestFilterLanguage(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []uint64
	}{
		{"method:tools/call", []uint64{7}},
		{"tool:slow", []uint64{7}},
		{"dir:out kind:notification", []uint64{3, 18}},
		{"id:3 dir:in", []uint64{9, 11}},
		{"id:3 kind:error", []uint64{9}},
		{"status:error", []uint64{5, 9, 10, 11, 16, 17}},
		{"status:malformed", []uint64{5}},
		{"kind:request -dir:in boom", nil},
		{"kind:error boom", []uint64{9}},
		{`id:"3"`, []uint64{10}},
		{"method:ping dir:in", []uint64{14}},
	} {
		m := newModel(t, 100, 30)
		press(m, "/")
		typeText(m, tc.q)
		if got := seqs(m); !equal(got, tc.want) {
			t.Errorf("%q: rows %v, want %v", tc.q, got, tc.want)
		}
	}
	// A mistake matches nothing and says why, where the count is.
	m := newModel(t, 100, 30)
	press(m, "/")
	typeText(m, "status:error dur:>1s")
	if m.count() != 0 || !strings.Contains(ansi.Strip(m.View()), `unknown field "dur"`) {
		t.Fatalf("a bad query: %d rows\n%s", m.count(), ansi.Strip(m.View()))
	}
}
