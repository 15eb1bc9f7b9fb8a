package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/browsertest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/report"
)

// load reads a capture's header and events.
func load(t *testing.T, path string) (capture.Header, []client.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	var evs []client.Event
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		ev, ok, err := h.Event(rec)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			evs = append(evs, ev)
		}
	}
	return h, evs
}

// exportPage writes the report of the capture at path and returns the
// page's path and its model.
func exportPage(t *testing.T, path string) (string, *report.Model) {
	t.Helper()
	h, evs := load(t, path)
	b := report.New(h, report.Options{File: filepath.Base(path), Sonde: "test"})
	for _, ev := range evs {
		b.Add(ev)
	}
	m := b.Model()
	var buf bytes.Buffer
	if err := report.Write(&buf, m); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return out, m
}

// openPage opens a page in a fresh headless Chromium and waits for its
// script to have drawn it.
func openPage(t *testing.T, path string, w, h int) (*browsertest.Browser, *browsertest.Page) {
	t.Helper()
	br := browsertest.Start(t)
	p := br.Open("file://"+path, w, h)
	p.WaitFor(`document.body && document.body.dataset.ready`, 60*time.Second)
	var state string
	p.MustEval(`document.body.dataset.ready`, &state)
	if state != "1" {
		var msg string
		p.MustEval(`document.getElementById("load-error").textContent`, &msg)
		t.Fatalf("the page did not load: %s", msg)
	}
	return br, p
}

// goMatches is the rows the Go filter keeps of the capture, as the
// command line's --filter judges events.
func goMatches(t *testing.T, path, query string, m *report.Model) []uint64 {
	t.Helper()
	f, err := filter.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	_, evs := load(t, path)
	reqs := filter.NewRequests()
	for _, ev := range evs {
		reqs.Learn(ev)
	}
	reqs.Rewind()
	rows := map[uint64]bool{}
	for _, r := range m.Rows {
		rows[r.Seq] = true
	}
	var keep []uint64
	for _, ev := range evs {
		it, ok := reqs.Item(ev)
		if rows[ev.Seq] && (!ok || f.Match(&it)) {
			keep = append(keep, ev.Seq)
		}
	}
	return keep
}

// pageMatches types query into the page's filter and returns the rows it
// shows, or the error it reports.
func pageMatches(t *testing.T, p *browsertest.Page, query string) ([]uint64, string) {
	t.Helper()
	q, _ := json.Marshal(query)
	var res struct {
		Seqs []uint64
		Err  string
	}
	p.MustEval(`(() => { const q = document.getElementById("q"); q.value = `+string(q)+`;
		q.dispatchEvent(new Event("input"));
		return { Seqs: [...document.querySelectorAll("#frames tbody tr[data-seq]")].map((r) => Number(r.dataset.seq)),
			Err: document.getElementById("q-err").textContent }; })()`, &res)
	return res.Seqs, res.Err
}

// TestPageFilterMatchesGo holds the page's port of the filter language to
// the Go package: on the same frames, every query keeps the same rows, and
// every mistake is reported with the same words and position.
func TestPageFilterMatchesGo(t *testing.T) {
	for _, capFile := range []string{"out-of-order-late-crash.jsonl", "concurrent-calls.jsonl"} {
		path := filepath.Join("..", "testdata", "captures", capFile)
		page, m := exportPage(t, path)
		_, p := openPage(t, page, 1280, 800)
		queries := []string{"", "method:tools/call", "method:TOOLS status:error", "status:late", "-status:resolved",
			"kind:response", "kind:error", "kind:notification dir:in", "dir:out", "id:2", `id:"2"`, "id:abc", "tool:echo",
			"duration:>10ms", "duration:<=1s", "duration:=0s", "duration:>1.5ms", "duration:<1h2m3.5s", "status:timeout",
			"status:iserror", "echo", "ECHO", "-echo", `"not json"`, "jsonrpc", "status:malformed", "method:tools/call status:error",
			"tool:slow duration:>=20ms", "progress", "initialize -kind:request", "- x", "-", "µ", "id:1", "id:-1", "id:3 kind:response"}
		for _, q := range queries {
			want := goMatches(t, path, q, m)
			got, perr := pageMatches(t, p, q)
			if perr != "" || !slices.Equal(got, want) {
				t.Errorf("%s: filter %q: page shows %v (%s), Go keeps %v", capFile, q, got, perr, want)
			}
		}
		for _, q := range []string{"methd:x", "method:", `tool:"open`, "dir:up", "kind:x", "duration:500ms", "duration:>soon",
			"duration:>5", "duration:>1e3s", `tool:"é" dir:sideways`, `x "éé`, "duration:>9999999999h", "id:", `-method:""`} {
			_, gerr := filter.Parse(q)
			_, perr := pageMatches(t, p, q)
			if gerr == nil || perr != gerr.Error() {
				t.Errorf("%s: filter %q: page says %q, Go says %v", capFile, q, perr, gerr)
			}
		}
	}
}

// TestPageShowsCapture opens the report of a capture and checks what it
// shows against the capture: the header's counts, the verdicts, a row per
// frame, the waterfall's requests, the diagram's steps, that the filter
// of the issue narrows the list, that no request left the page, and that
// a screenshot at a laptop's and a phone's size is not blank.
func TestPageShowsCapture(t *testing.T) {
	path := filepath.Join("..", "testdata", "captures", "out-of-order-late-crash.jsonl")
	page, m := exportPage(t, path)
	_, evs := load(t, path)
	frames, verdicts := 0, map[string]int{}
	for _, ev := range evs {
		if ev.Kind == client.EvFrame {
			frames++
			verdicts[string(ev.Frame.Verdict)]++
		}
	}
	for _, size := range [][2]int{{1280, 800}, {390, 844}} {
		br, p := openPage(t, page, size[0], size[1])
		var got struct {
			Frames, Calls, Errors string
			Verdicts              map[string]string
			FrameRows, Spans      int
			Steps, Findings       int
		}
		p.MustEval(`(() => { const k = (n) => document.querySelector('#meta dd[data-k="' + n + '"]').textContent;
			const v = {}; document.querySelectorAll("#verdicts li").forEach((li) => v[li.dataset.verdict] = li.querySelector("b").textContent);
			return { Frames: k("frames"), Calls: k("calls"), Errors: k("errors"), Verdicts: v,
				FrameRows: document.querySelectorAll('#frames tbody tr[data-kind="frame"]').length,
				Spans: document.querySelectorAll("#wf-rows .wf-row").length,
				Steps: document.querySelectorAll("#seq g.step").length,
				Findings: document.querySelectorAll("#findings li").length }; })()`, &got)
		if got.Frames != fmt.Sprint(frames) || got.FrameRows != frames || got.Calls != fmt.Sprint(m.Meta.Calls) ||
			got.Errors != fmt.Sprint(m.Meta.Errors) || got.Spans != len(m.Spans) || got.Steps != len(m.Diagram.Steps) ||
			got.Findings != len(m.Findings) || len(got.Verdicts) != len(verdicts) {
			t.Errorf("%v: the page shows %+v; the capture has %d frames, verdicts %v, model %+v", size, got, frames, verdicts, m.Meta)
		}
		for v, n := range verdicts {
			if got.Verdicts[v] != fmt.Sprint(n) {
				t.Errorf("%v: verdict %s: page %q, capture %d", size, v, got.Verdicts[v], n)
			}
		}
		if m.Meta.Calls == 0 || m.Meta.Errors == 0 || len(m.Findings) == 0 || verdicts["late"] == 0 {
			t.Errorf("the sample capture should have calls, errors, findings and a late answer: %+v", m.Meta)
		}
		var labels []string
		p.MustEval(`[...document.querySelectorAll("#seq g.step > text")].map((t) => t.textContent)`, &labels)
		for i, st := range m.Diagram.Steps {
			if i >= len(labels) || labels[i] != st.Label {
				t.Errorf("%v: diagram step %d: the SVG says %q, the Mermaid export's step %q", size, i, labels[min(i, len(labels)-1)], st.Label)
				break
			}
		}
		narrowed, _ := pageMatches(t, p, "method:tools/call status:error")
		if len(narrowed) == 0 || len(narrowed) >= len(m.Rows) {
			t.Errorf("%v: method:tools/call status:error shows %d of %d rows", size, len(narrowed), len(m.Rows))
		}
		checkNotBlank(t, p.Screenshot(), size)
		if reqs := br.Requests(); len(reqs) != 0 {
			t.Errorf("%v: the page made requests: %v", size, reqs)
		}
	}
}

// checkNotBlank checks a screenshot's size and that it has a fair spread
// of light and dark pixels (text and bars on a background), a coarse
// statistic rather than exact pixels.
func checkNotBlank(t *testing.T, shot []byte, size [2]int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != size[0] || b.Dy() != size[1] {
		t.Errorf("screenshot %v, want %v", b, size)
	}
	light, dark, colour := 0, 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			lum := (r + g + bl) / 3 >> 8
			switch {
			case lum > 200:
				light++
			case lum < 90:
				dark++
			}
			if max(r, g, bl)-min(r, g, bl) > 0x4000 {
				colour++
			}
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if dark < total/200 || light < total/10 || colour == 0 {
		t.Errorf("%v: the screenshot looks blank: %d light, %d dark, %d coloured of %d", size, light, dark, colour, total)
	}
}

// hostile is what a hostile server says, in every place the page shows.
const hostile = `</script><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>` +
	`<a href="javascript:window.__pwned=3">x</a>` + "\x1b]0;title\x07\x1b[2J\x9b\x00" + `<svg onload="window.__pwned=4">&lt;`

// TestHostileCapture exports a capture whose server text is markup,
// script, javascript: links, terminal escapes and a 10 MB string, and
// checks the page runs none of it (no handler ran, no element was made of
// it, no request left), shows the text as text, and stays responsive.
func TestHostileCapture(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hostile.jsonl")
	os.WriteFile(path, []byte(hostileCapture(t)), 0o600)
	page, m := exportPage(t, path)
	html, _ := os.ReadFile(page)
	if bytes.Contains(html, []byte("onerror")) || bytes.Contains(html, []byte("__pwned")) {
		t.Fatal("server text reached the page's HTML source: it must be inside the compressed model only")
	}
	if st, _ := os.Stat(page); st.Size() > 2<<20+int64(len(hostileCapture(t))) {
		t.Errorf("page is %d bytes", st.Size())
	}
	br, p := openPage(t, page, 1280, 800)
	var got struct {
		Pwned    any
		Imgs     int
		Scripts  int
		Links    int
		Server   string
		Shows    bool
		TookMs   float64
		RowsShow int
	}
	p.MustEval(`(() => { const t0 = performance.now(); const q = document.getElementById("q"); q.value = "onerror"; q.dispatchEvent(new Event("input"));
		const took = performance.now() - t0;
		return { Pwned: window.__pwned === undefined ? null : window.__pwned, Imgs: document.querySelectorAll("img, svg [onload], iframe, object").length,
			Scripts: document.scripts.length, Links: document.querySelectorAll('a[href^="javascript"]').length,
			Server: document.querySelector('#meta dd[data-k="server"]').textContent,
			Shows: document.body.textContent.includes("<img src=x onerror="), TookMs: took,
			RowsShow: document.querySelectorAll("#frames tbody tr[data-seq]").length }; })()`, &got)
	if got.Pwned != nil || got.Imgs != 0 || got.Scripts != 2 || got.Links != 0 || !strings.Contains(got.Server, "</script><img") || !got.Shows {
		t.Errorf("hostile text ran or became markup: %+v", got)
	}
	if got.RowsShow == 0 {
		t.Errorf("the filter found none of the hostile rows: %+v", got)
	}
	// Open the frame with the 10 MB string: the page still answers.
	var opened bool
	p.MustEval(`(() => { const q = document.getElementById("q"); q.value = "id:2 kind:response"; q.dispatchEvent(new Event("input"));
		const tr = document.querySelector("#frames tbody tr[data-seq]"); tr.click();
		return !!tr.nextElementSibling && tr.nextElementSibling.classList.contains("detail"); })()`, &opened)
	if !opened {
		t.Error("the big frame did not open")
	}
	// Defence in depth: even markup put into the page by hand runs no
	// handler and loads nothing (the page's Content-Security-Policy).
	p.MustEval(`(() => { const d = document.createElement("div"); d.innerHTML = '<img src="http://127.0.0.1:9/x.png" onerror="window.__pwned=5">';
		document.body.append(d); })()`, nil)
	time.Sleep(300 * time.Millisecond)
	var after any
	p.MustEval(`window.__pwned === undefined ? null : window.__pwned`, &after)
	if after != nil || len(br.Requests()) != 0 || len(m.Rows) == 0 || !slices.Contains(br.Blocked(), "csp") {
		t.Errorf("after opening frames and injecting markup: pwned %v, requests %v, blocked %v", after, br.Requests(), br.Blocked())
	}
}

// hostileCapture is a stdio capture whose server says hostile things in
// its info, a tool, a log notification, a line that is not JSON, stderr,
// and a 10 MB result.
func hostileCapture(t *testing.T) string {
	t.Helper()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	rawIn := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	lines := []string{
		`{"type":"header","format":"sonde-capture","version":"1.0","sonde":"test","start":"2026-11-29T13:49:57Z","transport":"stdio","command":[` + q(hostile) + `]}`,
		`{"type":"process","seq":1,"t":1000,"what":"start","pid":7,"argv":[` + q(hostile) + `]}`,
		`{"type":"frame","seq":2,"t":2000,"dir":"out","id":1,"method":"initialize","kind":"request","raw":` +
			q(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sonde","version":"t"}}}`) + `,"verdict":"sent"}`,
		`{"type":"frame","seq":3,"t":3000,"dir":"in","id":1,"kind":"response","raw":` + q(rawIn(map[string]any{"jsonrpc": "2.0", "id": 1,
			"result": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": hostile, "version": hostile}, "instructions": hostile}})) + `,"verdict":"resolved","detail":` + q("resolved "+hostile) + `}`,
		`{"type":"frame","seq":4,"t":4000,"dir":"in","method":` + q(hostile) + `,"kind":"notification","raw":` +
			q(rawIn(map[string]any{"jsonrpc": "2.0", "method": hostile, "params": map[string]any{"data": hostile}})) + `,"verdict":"notification"}`,
		`{"type":"frame","seq":5,"t":5000,"dir":"in","raw":` + q(hostile) + `,"verdict":"malformed","detail":` + q(hostile) + `}`,
		`{"type":"stderr","seq":6,"t":6000,"data":` + q(hostile+"\n") + `}`,
		`{"type":"frame","seq":7,"t":7000,"dir":"out","id":2,"method":"tools/call","kind":"request","raw":` +
			q(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`) + `,"verdict":"sent"}`,
		`{"type":"frame","seq":8,"t":9000,"dir":"in","id":2,"kind":"response","raw":` + q(rawIn(map[string]any{"jsonrpc": "2.0", "id": 2,
			"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat(hostile, 10<<20/len(hostile))}}}})) + `,"verdict":"resolved"}`,
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestPageOfServerEverything records a session of the reference server
// (server-everything: tools/list, two calls that work, one of a tool it
// does not have) and checks the page against the capture: the frames, the
// calls, the errors and the verdicts, and that `method:tools/call
// status:error` narrows the list to that call, as the Go filter does.
func TestPageOfServerEverything(t *testing.T) {
	bin := peertest.Everything(t)
	browsertest.Path(t)
	path := filepath.Join(t.TempDir(), "everything.jsonl")
	script := `{"method":"tools/list"}
{"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi </script>"}}}
{"method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}
{"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}
`
	r := clitest.RunSonde(t, script, "script", "--record", path, "-", "--", bin)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("not recorded: %d %s", r.Code, r.Stderr)
	}
	page, m := exportPage(t, path)
	if m.Meta.Calls != 3 || m.Meta.Errors != 1 || m.Meta.Server == "" || m.Meta.Era != "legacy" {
		t.Errorf("model: %+v", m.Meta)
	}
	_, p := openPage(t, page, 1280, 800)
	var got struct{ Frames, Calls, Errors, Server string }
	p.MustEval(`(() => { const k = (n) => document.querySelector('#meta dd[data-k="' + n + '"]').textContent;
		return { Frames: k("frames"), Calls: k("calls"), Errors: k("errors"), Server: k("server") }; })()`, &got)
	if got.Frames != fmt.Sprint(m.Meta.Frames) || got.Calls != "3" || got.Errors != "1" || !strings.HasPrefix(got.Server, m.Meta.Server) {
		t.Errorf("the page shows %+v; the capture %+v", got, m.Meta)
	}
	q := "method:tools/call status:error"
	shown, _ := pageMatches(t, p, q)
	want := goMatches(t, path, q, m)
	frames := 0
	for _, s := range shown {
		for _, r := range m.Rows {
			if r.Seq == s && r.Kind == "frame" {
				frames++
			}
		}
	}
	if !slices.Equal(shown, want) || frames != 2 {
		t.Errorf("%s: page %v (%d frames), Go %v: want the failed call's request and answer", q, shown, frames, want)
	}
}

// TestPageKeysAndThemes drives the page from the keyboard (/ to the
// filter, Escape back, j and k through the frames, Enter to open one, +
// to zoom the waterfall) and checks it follows the system's light or
// dark setting.
func TestPageKeysAndThemes(t *testing.T) {
	page, _ := exportPage(t, filepath.Join("..", "testdata", "captures", "concurrent-calls.jsonl"))
	_, p := openPage(t, page, 1280, 800)
	active := func() string {
		var s string
		p.MustEval(`(() => { const a = document.activeElement; return a.id || (a.dataset && a.dataset.seq ? "row " + a.dataset.seq : a.tagName); })()`, &s)
		return s
	}
	p.Press("/")
	if a := active(); a != "q" {
		t.Errorf("after /: focus on %s, want the filter", a)
	}
	p.Press("Escape")
	p.MustEval(`document.activeElement.blur()`, nil)
	p.Press("j")
	first := active()
	p.Press("j")
	second := active()
	p.Press("k")
	if !strings.HasPrefix(first, "row ") || second == first || active() != first {
		t.Errorf("j, j, k: %s, %s, %s", first, second, active())
	}
	p.Press("Enter")
	var open bool
	p.MustEval(`document.activeElement.getAttribute("aria-expanded") === "true" && document.activeElement.nextElementSibling.classList.contains("detail")`, &open)
	if !open {
		t.Error("Enter did not open the frame")
	}
	var before, after string
	p.MustEval(`document.getElementById("wf-window").textContent`, &before)
	p.Press("+")
	p.MustEval(`document.getElementById("wf-window").textContent`, &after)
	if before == after {
		t.Errorf("+ did not zoom: %s", after)
	}
	bg := func() string {
		var s string
		p.MustEval(`getComputedStyle(document.body).backgroundColor`, &s)
		return s
	}
	p.Dark(false)
	light := bg()
	p.Dark(true)
	if dark := bg(); dark == light || light != "rgb(255, 255, 255)" {
		t.Errorf("light %s, dark %s", light, dark)
	}
}

// TestPageDurationsMatchGo holds the page's port of time.ParseDuration to
// Go's on the values duration: takes, fractions, units and overflows
// included.
func TestPageDurationsMatchGo(t *testing.T) {
	page, _ := exportPage(t, filepath.Join("..", "testdata", "captures", "concurrent-calls.jsonl"))
	_, p := openPage(t, page, 1280, 800)
	cases := []string{"0", "0s", "1s", "-1s", "+2m", "1.5s", ".5ms", "5.ms", "1h2m3.25s", "1µs", "1μs", "3us", "10ns",
		"2562047h", "2562048h", "9223372036854775807ns", "9223372036854775808ns", "1.0000000000000000000001s",
		"0.1234567891234ms", "1e3s", "", ".", "s", "1", "1x", "-", "1s2", "1.2.3s", "99999999999999999999s", "0.3333333333333333333h"}
	for _, c := range cases {
		want := "error"
		if d, err := time.ParseDuration(c); err == nil {
			want = fmt.Sprint(int64(d))
		}
		q, _ := json.Marshal(c)
		var got string
		p.MustEval(`(() => { const d = sondeFilter.parseDuration(new TextEncoder().encode(`+string(q)+`)); return d === null ? "error" : String(d); })()`, &got)
		if got != want {
			t.Errorf("ParseDuration(%q): page %s, Go %s", c, got, want)
		}
	}
}
