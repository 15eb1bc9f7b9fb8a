package timeouts

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Policy
	}{
		{"timeout=30s", Policy{Timeout: 30 * time.Second}},
		{"timeout=none", Policy{}},
		{"timeout=1m30s,reset-on-progress", Policy{Timeout: 90 * time.Second, ResetOnProgress: true}},
		{"timeout=5m, reset-on-progress, max-total=1m, total-on-progress", Policy{Timeout: 5 * time.Minute, ResetOnProgress: true, MaxTotal: time.Minute, TotalOnProgress: true}},
		{"max-total=2s,timeout=1s", Policy{Timeout: time.Second, MaxTotal: 2 * time.Second}},
	} {
		got, err := ParsePolicy(tc.in)
		tc.want.Name = tc.in
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{
		"", "timeout", "timeout=", "timeout=0s", "timeout=-1s", "timeout=2d", "timeout=25h", "timeout=1s,timeout=2s",
		"reset-on-progress", "timeout=1s,reset", "timeout=1s,reset-on-progress=yes", "timeout=1s,max-total=none,",
		"timeout=1s,max-total=1m,total-on-progress", "timeout=1s,reset-on-progress,total-on-progress", "ts-sdk,reset-on-progress",
	} {
		if p, err := ParsePolicy(in); !errors.Is(err, ErrPolicy) {
			t.Errorf("%q: %+v %v, want ErrPolicy", in, p, err)
		}
	}
	if p, err := ParsePolicy("inspector-v1"); err != nil || p.Name != "inspector-v1" || p.MaxTotal != time.Minute {
		t.Errorf("a preset by name: %+v %v", p, err)
	}
}

// FuzzParsePolicy: a policy that parses writes back (Spec) to one that
// parses to the same limits; nothing panics.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"timeout=60s", "timeout=none", "timeout=5m,reset-on-progress,max-total=1m,total-on-progress", "ts-sdk", "sonde", "timeout=1s,,", "=,=", "timeout=1e9ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("%q: %v is not ErrPolicy", s, err)
			}
			return
		}
		if p.Session {
			return
		}
		q, err := ParsePolicy(p.Spec())
		if err != nil {
			t.Fatalf("%q: its spec %q does not parse: %v", s, p.Spec(), err)
		}
		q.Name = p.Name
		if q != p {
			t.Fatalf("%q: %+v, its spec %q: %+v", s, p, p.Spec(), q)
		}
		if p.Timeout < 0 || p.Timeout > MaxDuration || p.MaxTotal < 0 || p.MaxTotal > MaxDuration {
			t.Fatalf("%q: out of bounds %+v", s, p)
		}
	})
}

// TestPresetsDocumented: docs/timeouts.md has a row for each preset that
// says its limits exactly as Spec writes them and its source file, so a
// number changed here without its doc (or there without here) fails.
func TestPresetsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/timeouts.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if name, _, ok = strings.Cut(name, "`"); ok {
				rows[name] = line
			}
		}
	}
	for _, p := range Presets() {
		row, ok := rows[p.Name]
		file, _, _ := strings.Cut(p.Source, ":")
		switch {
		case !ok:
			t.Errorf("docs/timeouts.md: no row for preset %s", p.Name)
		case !p.Session && !strings.Contains(row, "`"+p.Spec()+"`"):
			t.Errorf("docs/timeouts.md: the row of %s does not say `%s`:\n%s", p.Name, p.Spec(), row)
		case !strings.Contains(row, file):
			t.Errorf("docs/timeouts.md: the row of %s does not name its source %s:\n%s", p.Name, file, row)
		}
		delete(rows, p.Name)
	}
}
