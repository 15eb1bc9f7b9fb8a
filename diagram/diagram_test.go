package diagram

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/golden"
)

func TestMain(m *testing.M) { capturetest.Main(m) }

// samples are real captures of fixture sessions (testdata/captures).
var samples = map[string]string{
	"out-of-order-late-crash": "../testdata/captures/out-of-order-late-crash.jsonl",
	"concurrent-calls":        "../testdata/captures/concurrent-calls.jsonl",
}

func build(t *testing.T, path string, o Options) *Builder {
	t.Helper()
	b := New(o)
	for _, ev := range capturetest.Events(t, path) {
		b.Add(ev)
	}
	return b
}

func mermaid(t *testing.T, b *Builder) string {
	t.Helper()
	var sb strings.Builder
	if err := b.Mermaid(&sb); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func text(t *testing.T, b *Builder, width int) string {
	t.Helper()
	var sb strings.Builder
	if err := b.Text(&sb, width); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// mermaidLine is every line a diagram may hold after its first.
var mermaidLine = regexp.MustCompile(`^    (participant [CS] as ` + safeText + `|[CS](->>|-->>|-\)|--x)[CS]: ` + safeText + `|Note (over C,S|left of C|right of S): ` + safeText + `)$`)

// safeText is text with no character that ends a statement or is markup,
// except in an entity code.
const safeText = `([^#;<>&\n]|#[0-9]+;)+`

// checkMermaid checks the structure: the header, two participants, every
// line an arrow or a note between them, no character that would end a
// statement, and every response's id sent before (unless flagged, or sent
// before a window).
func checkMermaid(t *testing.T, out string, windowed bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "sequenceDiagram" || !strings.HasPrefix(lines[1], "    participant C as sonde") || !strings.HasPrefix(lines[2], "    participant S as ") {
		t.Fatalf("header:\n%s", strings.Join(lines[:min(3, len(lines))], "\n"))
	}
	sent := map[string]bool{}
	idRe := regexp.MustCompile(`\[id ([^\]]+)\]`)
	for i, l := range lines[1:] {
		if !mermaidLine.MatchString(l) {
			t.Errorf("line %d is not a participant, arrow or note: %q", i+2, l)
		}
		m := idRe.FindStringSubmatch(l)
		switch {
		case m == nil:
		case strings.HasPrefix(l, "    C->>S: "):
			sent[m[1]] = true
		case strings.HasPrefix(l, "    S-->>C: ") && !strings.Contains(l, "unknown") && !windowed && !sent[m[1]]:
			t.Errorf("line %d answers id %s, never sent", i+2, m[1])
		}
	}
}

func TestSamples(t *testing.T) {
	for name, path := range samples {
		t.Run(name, func(t *testing.T) {
			b := build(t, path, Options{})
			out := mermaid(t, b)
			checkMermaid(t, out, false)
			golden.Assert(t, name+".mmd", out)
			txt := text(t, b, 100)
			for i, l := range strings.Split(strings.TrimSuffix(txt, "\n"), "\n")[1:] {
				if w := utf8.RuneCountInString(l); w != 100 {
					t.Errorf("text line %d is %d runes wide, want 100: %q", i+2, w, l)
				}
			}
			golden.Assert(t, name+".txt", txt)
		})
	}
}

// TestOutOfOrder: the sample's fast call, sent second, is answered first;
// the diagram says so at that response.
func TestOutOfOrder(t *testing.T) {
	out := mermaid(t, build(t, samples["out-of-order-late-crash"], Options{}))
	want := "    Note over C,S: id 3 answered before id 2, sent earlier\n"
	i := strings.Index(out, want)
	if i < 0 {
		t.Fatalf("no out-of-order note:\n%s", out)
	}
	if prev := strings.TrimSuffix(out[:i], "\n"); !strings.HasSuffix(prev, "    S-->>C: result [id 3] "+lastField(prev)) {
		t.Errorf("the note does not follow id 3's result:\n%s", prev[max(0, len(prev)-200):])
	}
	for _, s := range []string{"S-->>C: result [id 4] late", "Note left of C: id 4 timeout after", "S--xC: not json: fixture noise", "Note right of S: server exited with code 3"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
}

// lastField is the last space-separated field of the text's last line.
func lastField(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, ' ')+1:]
}

func TestWindow(t *testing.T) {
	path := samples["out-of-order-late-crash"]
	all := capturetest.Events(t, path)
	var lateSeq uint64
	for _, ev := range all {
		if ev.Frame != nil && ev.Frame.Verdict == client.VerdictLate {
			lateSeq = ev.Seq
		}
	}
	// By seq: only the late response and what follows it; its label still
	// knows it was late, and the request it answers is outside.
	from, _ := ParseBound("#" + itoa(lateSeq))
	out := mermaid(t, build(t, path, Options{From: from}))
	checkMermaid(t, out, true)
	if strings.Contains(out, "initialize") || !strings.Contains(out, "S-->>C: result [id 4] late") || !strings.Contains(out, "Note over C,S: window from event "+itoa(lateSeq)+" to the end: events "+itoa(lateSeq)+" to ") {
		t.Errorf("window from the late response:\n%s", out)
	}
	// By time: an empty window says so.
	to, _ := ParseBound("11m")
	from, _ = ParseBound("10m")
	out = mermaid(t, build(t, path, Options{From: from, To: to}))
	if !strings.HasSuffix(out, "    Note over C,S: window from +10m0s to +11m0s: no events\n") {
		t.Errorf("empty window:\n%s", out)
	}
	// A time window keeps exactly the events inside it.
	from, _ = ParseBound("100ms")
	to, _ = ParseBound("300ms")
	b := build(t, path, Options{From: from, To: to})
	for _, s := range b.steps {
		if s.at < from.Time || s.at > to.Time {
			t.Errorf("step %+v outside the window", s)
		}
	}
	if len(b.steps) == 0 {
		t.Error("the window 100ms-300ms is empty")
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func TestParseBound(t *testing.T) {
	for in, want := range map[string]Bound{
		"":      {},
		"120":   {Set: true, IsSeq: true, Seq: 120},
		"#7":    {Set: true, IsSeq: true, Seq: 7},
		"1.5s":  {Set: true, Time: 1500e6},
		"250ms": {Set: true, Time: 250e6},
	} {
		if got, err := ParseBound(in); err != nil || got != want {
			t.Errorf("ParseBound(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"soon", "-1s", "1.5", "#x", "12q"} {
		if _, err := ParseBound(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseBound(%q): %v, want an error naming it", bad, err)
		}
	}
}

func TestMermaidText(t *testing.T) {
	for in, want := range map[string]string{
		"tools/call echo [id 3]": "tools/call echo [id 3]",
		"a;b":                    "a#59;b",
		"x#y":                    "x#35;y",
		"<script>":               "#60;script#62;",
		"a&b":                    "a#38;b",
		"%%comment":              "%%comment",
		"line\nbreak":            "line#65533;break",
		"note: colon":            "note: colon",
		"日本語":                    "日本語",
		`{"id":"q"}`:             `{"id":"q"}`,
		"bad\xffutf8":            "bad#65533;utf8",
	} {
		if got := MermaidText(in); got != want {
			t.Errorf("MermaidText(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzMermaidText: whatever a method name holds, the label is one line of
// letters, digits, spaces, plain punctuation and entity codes.
func FuzzMermaidText(f *testing.F) {
	for _, s := range []string{"tools/call", "a;b#c", "<>&%\n\r\x00", "日本", "\xff"} {
		f.Add(s)
	}
	safe := regexp.MustCompile(`^([^#;<>&\p{Cc}\p{Cf}\n]|#[0-9]+;)*$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got := MermaidText(s); !safe.MatchString(got) {
			t.Fatalf("MermaidText(%q) = %q", s, got)
		}
	})
}

// FuzzParseBound: a bound either parses and prints back to itself, or is
// an error naming the input.
func FuzzParseBound(f *testing.F) {
	for _, s := range []string{"1.5s", "120", "#3", "", "-1s", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBound(s)
		if err != nil {
			return
		}
		again, err := ParseBound(b.String())
		if err != nil || again != b {
			t.Fatalf("ParseBound(%q) = %+v, printed %q, read back %+v, %v", s, b, b.String(), again, err)
		}
	})
}
