package replay_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturegen"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/theme"
)

const sample = "../testdata/captures/out-of-order-late-crash.jsonl"

func open(t *testing.T, path string) *replay.Timeline {
	t.Helper()
	tl, err := replay.Open(path, replay.DefaultLinger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	return tl
}

func generate(t testing.TB, o capturegen.Options) string {
	t.Helper()
	return capturegen.Temp(t, "gen.jsonl", o)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notCapture, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), os.ErrNotExist},
		{"not a capture", notCapture, capture.ErrNotCapture},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := replay.Open(tc.path, replay.DefaultLinger)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTruncatedWarns(t *testing.T) {
	tl := open(t, generate(t, capturegen.Options{Events: 50, Truncate: true}))
	if w := tl.Warnings(); !slices.Contains(w, "truncated capture") {
		t.Fatalf("warnings %q", w)
	}
	if clean := open(t, sample); len(clean.Warnings()) != 0 {
		t.Fatalf("the sample has warnings %q", clean.Warnings())
	}
}

// TestReadMatchesReader: events read through the timeline (sequentially and
// one by one) are those of the plain reader, in order.
func TestReadMatchesReader(t *testing.T) {
	all := capturetest.Events(t, sample)
	tl := open(t, sample)
	if tl.Len() != len(all) {
		t.Fatalf("Len %d, reader %d", tl.Len(), len(all))
	}
	got, err := tl.Read(0, tl.Len())
	if err != nil {
		t.Fatal(err)
	}
	nums := make([]int32, tl.Len())
	for i := range nums {
		nums[i] = int32(i)
	}
	one := tl.Events(nums)
	for i := range all {
		if got[i].Seq != all[i].Seq || got[i].Kind != all[i].Kind || one[i].Seq != all[i].Seq {
			t.Fatalf("event %d: seq %d/%d kind %v, want seq %d kind %v", i, got[i].Seq, one[i].Seq, got[i].Kind, all[i].Seq, all[i].Kind)
		}
	}
	if tl.Time(tl.Len()) != all[len(all)-1].Time.Sub(tl.Header().Start) && tl.End() < all[len(all)-1].Time.Sub(tl.Header().Start) {
		t.Errorf("End %v", tl.End())
	}
}

// folder is the pending pane fed every event from the start, in order, with
// the time reached set after each batch (as stepping forward does).
type folder struct {
	tl  *replay.Timeline
	all []client.Event
	p   *pending.Model
	k   int
}

// at returns the pane's rows at position k (k never decreases).
func (f *folder) at(k int) []pending.Entry {
	if f.p == nil {
		f.p = pending.New(theme.New(theme.NoColor()))
	}
	f.p.Apply(f.all[f.k:k])
	f.k = k
	f.p.SetNow(f.tl.Header().Start.Add(f.tl.Time(k)))
	return f.p.Entries()
}

// rebuilt is the pending pane rebuilt for position k as the replay does:
// the checkpoint's carried events, then [from, k).
func rebuilt(t *testing.T, tl *replay.Timeline, k int) []pending.Entry {
	t.Helper()
	carry, from := tl.Plan(k)
	evs := tl.Events(carry)
	rest, err := tl.Read(from, k)
	if err != nil {
		t.Fatal(err)
	}
	p := pending.New(theme.New(theme.NoColor()))
	p.Apply(append(evs, rest...))
	p.SetNow(tl.Header().Start.Add(tl.Time(k)))
	return p.Entries()
}

// TestRebuildEqualsFold: at every checked position of a capture much longer
// than the warm-up, with slow requests in flight across checkpoints, late
// answers and progress, the pending map rebuilt from a checkpoint is the
// map built by applying every event from the start.
func TestRebuildEqualsFold(t *testing.T) {
	path := generate(t, capturegen.Options{Events: 12000, Step: 5 * time.Millisecond, SlowEvery: 50, SlowFor: 6000, TimeoutEvery: 70})
	tl := open(t, path)
	all := capturetest.Events(t, path)
	if tl.Len() != len(all) {
		t.Fatalf("Len %d, reader %d", tl.Len(), len(all))
	}
	checked, slow := 0, 0
	f := &folder{tl: tl, all: all}
	for k := 0; k <= tl.Len(); k += 523 {
		if _, from := tl.Plan(k); k > replay.Warm+replay.CheckpointEvery && from == 0 {
			t.Fatalf("Plan(%d) starts from 0", k)
		}
		// A map: the pane's row order depends on how its batches came
		// (settled rows keep their place until something is reordered).
		want, got := byKey(f.at(k)), byKey(rebuilt(t, tl, k))
		if !slices.EqualFunc(want, got, entryEqual) {
			t.Fatalf("position %d: rebuilt pending map differs:\n got %v\nwant %v", k, got, want)
		}
		for _, e := range want {
			if e.State == client.StateSent && e.Age > 20*time.Second {
				slow++
			}
		}
		checked++
	}
	if slow == 0 {
		t.Fatal("no request was in flight across a checkpoint: the test proves nothing")
	}
	t.Logf("%d positions checked, %d long-running rows seen", checked, slow)
}

// byKey sorts rows by direction and id.
func byKey(es []pending.Entry) []pending.Entry {
	slices.SortStableFunc(es, func(a, b pending.Entry) int {
		if a.Dir != b.Dir {
			return int(a.Dir) - int(b.Dir)
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	return es
}

func entryEqual(a, b pending.Entry) bool {
	return a.ID == b.ID && a.Dir == b.Dir && a.Method == b.Method && a.Tool == b.Tool && a.State == b.State &&
		a.Age == b.Age && a.Remaining == b.Remaining && a.Latency == b.Latency && a.Err == b.Err &&
		progressEqual(a.Progress, b.Progress)
}

func progressEqual(a, b *client.Progress) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Progress == b.Progress && a.Message == b.Message &&
		(a.Total == nil) == (b.Total == nil) && (a.Total == nil || *a.Total == *b.Total)
}

func TestProblemsFramesTools(t *testing.T) {
	path := generate(t, capturegen.Options{Events: 3000, TimeoutEvery: 70})
	tl := open(t, path)
	all := capturetest.Events(t, path)
	// Every problem is a late frame or a timeout, in order.
	var want []int
	for i, ev := range all {
		if ev.Kind == client.EvFrame && ev.Frame.Verdict == client.VerdictLate ||
			ev.Kind == client.EvRequest && ev.Req.State == client.StateTimeout {
			want = append(want, i)
		}
	}
	var got []int
	for p := tl.NextProblem(0); p >= 0; p = tl.NextProblem(p + 1) {
		got = append(got, p)
	}
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("problems %v, want %v", got, want)
	}
	if p := tl.PrevProblem(want[1]); p != want[0] {
		t.Errorf("PrevProblem(%d) = %d, want %d", want[1], p, want[0])
	}
	// The frames of id 140 (a timed-out call): its request, then its late answer.
	var frames []int
	for p := tl.NextFrame(0, jsonrpc.Int(140)); p >= 0; p = tl.NextFrame(p+1, jsonrpc.Int(140)) {
		frames = append(frames, p)
	}
	if len(frames) != 2 || all[frames[1]].Frame.Verdict != client.VerdictLate {
		t.Fatalf("frames of id 140: %v", frames)
	}
	if p := tl.NextFrame(0, jsonrpc.String("140")); p != -1 {
		t.Errorf("the string id \"140\" matched frame %d", p)
	}
	// The tool list: none before tools/list's answer, two tools after.
	if n := tl.ToolsAt(3); n != 0 {
		t.Errorf("ToolsAt(3) = %d", n)
	}
	tools, err := tl.Tools(tl.ToolsAt(tl.Len()))
	if err != nil || len(tools) != 2 || tools[0].Name != "echo" {
		t.Fatalf("tools %v, %v", tools, err)
	}
	// The session record is known after initialize's answer.
	p := tl.SessionAt(tl.Len())
	if p < 0 {
		t.Fatal("no session")
	}
	if rec, err := tl.Session(p); err != nil || rec.ServerName != "gen-server" {
		t.Fatalf("session %+v, %v", rec, err)
	}
	if tl.SessionAt(1) != -1 {
		t.Error("a session before initialize")
	}
}

func TestAt(t *testing.T) {
	tl := open(t, generate(t, capturegen.Options{Events: 100}))
	for _, k := range []int{0, 1, 50, 100} {
		if got := tl.At(tl.Time(k)); k > 0 && got != k {
			t.Errorf("At(Time(%d)) = %d", k, got)
		}
	}
	if tl.At(-time.Second) != 0 || tl.At(time.Hour) != tl.Len() {
		t.Error("At out of range")
	}
}
