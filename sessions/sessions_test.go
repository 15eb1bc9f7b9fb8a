package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIDString: the label is kept to safe characters, the start in UTC.
func TestIDString(t *testing.T) {
	at := time.Date(2026, 7, 1, 12, 30, 5, 0, time.UTC)
	for label, want := range map[string]string{
		"github":                "github-20260701-123005-42",
		"my server!":            "my_server_-20260701-123005-42",
		"../..":                 "_..-20260701-123005-42",
		"..":                    "session-20260701-123005-42",
		"":                      "session-20260701-123005-42",
		strings.Repeat("a", 70): strings.Repeat("a", 64) + "-20260701-123005-42",
	} {
		if got := (ID{Label: label, Start: at, PID: 42}).String(); got != want {
			t.Errorf("ID{%q}.String() = %q, want %q", label, got, want)
		}
	}
	local := at.In(time.FixedZone("x", 3600))
	if got := (ID{Label: "l", Start: local, PID: 1}).FileName(); got != "l-20260701-123005-1.jsonl" {
		t.Errorf("FileName in another zone: %q", got)
	}
}

// TestParse: what String writes is read back; anything else is ErrNotID.
func TestParse(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]ID{
		"github-20261201-100000-7":        {Label: "github", Start: at, PID: 7},
		"a-b-c-20261201-100000-123.jsonl": {Label: "a-b-c", Start: at, PID: 123},
		"remote-1-20261201-100000-99":     {Label: "remote-1", Start: at, PID: 99},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "x-20261201-100000", "-20261201-100000-1", "x-2026120-100000-1", "x-20261201-10000-1", "x-20261301-100000-1", "x-20261201-100000-", "x-20261201-100000-1a", "x-20261201-100000--1"} {
		if id, err := Parse(in); !errors.Is(err, ErrNotID) {
			t.Errorf("Parse(%q) = %+v %v, want ErrNotID", in, id, err)
		}
	}
}

// FuzzParse: an id Parse reads is written back as it was (String∘Parse),
// and a parsed id parses to itself again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"github-20261201-100000-7", "a-b-20260701-123005-42", "x-20261301-100000-1", "--20261201-100000-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(id.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %+v; its String %q does not parse: %v", s, id, id.String(), err)
		}
		if CleanLabel(id.Label) == id.Label && id.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, id.String())
		}
		if again.Start != id.Start || again.PID != id.PID || again.Label != CleanLabel(id.Label) {
			t.Errorf("Parse(%q) = %+v, again %+v", s, id, again)
		}
	})
}

// TestCreateListResolve: Create makes the folder and never overwrites;
// List puts the live first; Resolve takes a unique prefix and names the
// ambiguous ones.
func TestCreateListResolve(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dead := ID{Label: "aaa", Start: at, PID: 1 << 30}
	f, path, err := Create(dir, dead)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := Create(dir, dead); err == nil {
		t.Error("Create over an existing session succeeded")
	}
	if _, _, err := Create("", dead); !errors.Is(err, ErrNoDir) {
		t.Errorf("Create without a folder: %v", err)
	}
	live := ID{Label: "zzz", Start: at, PID: os.Getpid()}
	for _, name := range []string{live.FileName(), "aab-odd.jsonl", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	// The test binary's command line has no "tap" argument: on Linux it
	// does not count as a tap; elsewhere it does.
	want := []string{"aaa-20261201-100000-1073741824", "aab-odd", "zzz-20261201-100000-" + strconv.Itoa(os.Getpid())}
	if Live(os.Getpid()) {
		want = append([]string{want[2]}, want[:2]...)
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("List: %q, want %q", names, want)
	}
	if got, ok, err := Resolve(dir, "zz"); err != nil || !ok || filepath.Base(got) != live.FileName() {
		t.Errorf("Resolve(zz) = %q %v %v", got, ok, err)
	}
	if got, ok, err := Resolve(dir, dead.FileName()); err != nil || !ok || got != path {
		t.Errorf("Resolve(whole name) = %q %v %v", got, ok, err)
	}
	if _, ok, err := Resolve(dir, "q"); ok || err != nil {
		t.Errorf("Resolve(q) = %v %v, want none", ok, err)
	}
	_, _, err = Resolve(dir, "aa")
	var amb *AmbiguousError
	if !errors.As(err, &amb) || len(amb.Names) != 2 || !strings.Contains(err.Error(), `"aa" begins 2 sessions`) {
		t.Errorf("Resolve(aa): %v", err)
	}
	if list, err := List(filepath.Join(dir, "none")); err != nil || list != nil {
		t.Errorf("List of a missing folder: %v %v", list, err)
	}
}
