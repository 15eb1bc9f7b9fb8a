package gate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/surface"
)

// TestStore: accept, load, list, replace, reset; labels that are not file
// names stay inside the folder and apart; a file that is not a baseline is
// refused with its name.
func TestStore(t *testing.T) {
	st := Store{Dir: filepath.Join(t.TempDir(), "baselines")}
	if _, err := st.Load("x"); !errors.Is(err, ErrNoBaseline) {
		t.Fatalf("load of nothing: %v", err)
	}
	if l, err := st.List(); err != nil || len(l) != 0 {
		t.Fatalf("list of nothing: %v %v", l, err)
	}
	s := &diff.Shown{Known: surface.Known{Tools: []diff.Item{{Key: "a", Def: json.RawMessage(`{"name":"a"}`)}}}}
	s.Server.Name = "srv"
	for _, label := range []string{"srv", "../evil", "a/b", "a%2Fb", ".hidden"} {
		p, err := st.Save(NewBaseline(label, "f.jsonl", s, time.Unix(5, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) != st.Dir || strings.HasPrefix(filepath.Base(p), ".") {
			t.Errorf("%q saved as %s", label, p)
		}
		b, err := st.Load(label)
		if err != nil || b.Label != label || len(b.Tools) != 1 || b.Server.Name != "srv" || !b.Accepted.Equal(time.Unix(5, 0)) {
			t.Errorf("%q: %+v %v", label, b, err)
		}
	}
	all, err := st.List()
	if err != nil || len(all) != 5 || all[0].Label != "../evil" {
		t.Fatalf("list: %v %v", all, err)
	}
	if fi, err := os.Stat(st.Path("srv")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", fi, err)
	}
	if err := st.Reset("srv"); err != nil {
		t.Fatal(err)
	}
	if err := st.Reset("srv"); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("second reset: %v", err)
	}
	if err := os.WriteFile(st.Path("bad"), []byte(`{"format":"other"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("bad"); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a foreign file: %v", err)
	}
}

// TestDriftResults: every change is a result; the rug-pull comes first
// and says what it is.
func TestDriftResults(t *testing.T) {
	b := &Baseline{Label: "srv", Tools: []BaselineTool{
		{Name: "gone", Def: json.RawMessage(`{"name":"gone"}`)},
		{Name: "read", Def: json.RawMessage(`{"name":"read","description":"reads","annotations":{"readOnlyHint":true}}`)},
	}}
	s := &diff.Shown{Known: surface.Known{Tools: []diff.Item{
		{Key: "read", Def: json.RawMessage(`{"name":"read","description":"reads and deletes"}`)},
		{Key: "new", Def: json.RawMessage(`{"name":"new"}`)},
	}}}
	rs := DriftResults(b, s, 7, 9)
	var msgs []string
	for _, r := range rs {
		msgs = append(msgs, r.Message)
		if r.Rule != RuleDrift || r.Seq != 7 || r.Line != 9 {
			t.Errorf("%+v", r)
		}
	}
	if len(msgs) != 4 || msgs[0] != "tool read: a read-only tool turned destructive (annotations.readOnlyHint true → false)" ||
		!strings.HasPrefix(msgs[1], "tool gone was removed") || msgs[2] != `tool read: description changed: "reads" → "reads and deletes"` || !strings.HasPrefix(msgs[3], "tool new was added") {
		t.Errorf("%q", msgs)
	}
}

// FuzzFileName: a label's file name never leaves the folder, never hides,
// and two labels never share one.
func FuzzFileName(f *testing.F) {
	f.Add("srv", "srv2")
	f.Add("../x", "..%2Fx")
	f.Add(".a", "%2Ea")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := fileName(a), fileName(b)
		if strings.ContainsAny(na, `/\`) || strings.HasPrefix(na, ".") || na == "..json" {
			t.Fatalf("%q -> %q", a, na)
		}
		if a != b && na == nb {
			t.Fatalf("%q and %q share %q", a, b, na)
		}
	})
}

// FuzzParseFailOn: any text is a set of known kinds or an error.
func FuzzParseFailOn(f *testing.F) {
	f.Add("must,should")
	f.Add("all, none,")
	f.Fuzz(func(t *testing.T, s string) {
		fo, err := ParseFailOn(s)
		if err != nil {
			return
		}
		for k := range fo {
			if !strings.Contains(","+KindList()+",", ","+string(k)+",") {
				t.Fatalf("%q: kind %q", s, k)
			}
		}
		again, err := ParseFailOn(fo.String())
		if err != nil || again.String() != fo.String() {
			t.Fatalf("%q: %v round trip %v", s, fo, err)
		}
	})
}

// TestDriftLoosened: a hint change toward less claimed harm is marked
// loosened; one toward more, without a rug-pull note, tightened.
func TestDriftLoosened(t *testing.T) {
	b := &Baseline{Label: "srv", Tools: []BaselineTool{
		{Name: "del", Def: json.RawMessage(`{"name":"del","annotations":{"destructiveHint":true,"idempotentHint":true}}`)},
	}}
	s := &diff.Shown{Known: surface.Known{Tools: []diff.Item{
		{Key: "del", Def: json.RawMessage(`{"name":"del","annotations":{"destructiveHint":false,"idempotentHint":false}}`)},
	}}}
	var msgs []string
	for _, r := range DriftResults(b, s, 1, 1) {
		msgs = append(msgs, r.Message)
	}
	want := []string{
		"tool del: annotations.destructiveHint changed: true → false (loosened: the tool now claims less harm, and a host may stop asking before it runs)",
		"tool del: annotations.idempotentHint changed: true → false (tightened)",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("%q\nwant %q", msgs, want)
	}
}
