package hostconfig

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// testTapFlags are flags of sonde tap as the command line hands them to
// Wrap and Unwrap (the real set is read from the tap's command there).
var testTapFlags = map[string]bool{"--label": true, "--record": true, "--no-record": false, "-h": false}

// TestWrapDashNames: a server named "--", one named "-", and one whose
// args hold "--" and "--label" wrap so that the tap's flags read the name
// as the label and the server's argv whole after the "--" that ends them,
// and unwrap back to the file byte for byte. Unwrap finds the tap's "--"
// by position (after the flags and their values), not as the first "--"
// (which, for the server named "--", is its label: it became the command).
func TestWrapDashNames(t *testing.T) {
	text := `{"mcpServers": {` +
		`"--": {"command": "x", "args": ["--", "y"]}, ` +
		`"-": {"command": "q"}, ` +
		`"b": {"command": "srv", "args": ["-a", "--", "--label", "z"]}, ` +
		`"--label": {"command": "--", "args": []}}}`
	orig := []byte(text)
	before, problems := Parse(orig, "f", paths.ClaudeDesktop, paths.User, "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	o := WrapOptions{Sonde: testSonde, All: true, TapFlags: testTapFlags}
	wrapped, _, err := Wrap(orig, paths.ClaudeDesktop, paths.User, o)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := Parse(wrapped, "f", paths.ClaudeDesktop, paths.User, "")
	for i, s := range after {
		b := before[i]
		want := append([]string{"tap", WrapMarker, "--label", b.Name, "--", b.Command}, b.Args...)
		if b.Args == nil {
			want = []string{"tap", WrapMarker, "--label=" + b.Name, "--", b.Command}
		}
		if !reflect.DeepEqual(s.Args, want) {
			t.Errorf("%q wrapped: %q, want %q", b.Name, s.Args, want)
		}
	}
	back, changes, err := Unwrap(wrapped, paths.ClaudeDesktop, paths.User, o)
	if err != nil || !bytes.Equal(back, orig) {
		t.Fatalf("unwrap (%v):\n%s\nwant:\n%s", err, back, orig)
	}
	for _, c := range changes {
		if c.State != Unwrapped {
			t.Errorf("%q: %s", c.Server, c.State)
		}
	}

	// The same entries as a sonde without the marker wrote them: named,
	// they unwrap byte for byte too.
	legacy := `{"mcpServers": {` +
		`"--": {"command": "/usr/local/bin/sonde", "args": ["tap", "--label", "--", "--", "x", "--", "y"]}, ` +
		`"-": {"command": "/usr/local/bin/sonde", "args": ["tap", "--label=-", "--", "q"]}, ` +
		`"b": {"command": "/usr/local/bin/sonde", "args": ["tap", "--label", "b", "--", "srv", "-a", "--", "--label", "z"]}, ` +
		`"--label": {"command": "/usr/local/bin/sonde", "args": ["tap", "--label", "--label", "--", "--"]}}}`
	o = WrapOptions{Sonde: testSonde, Servers: []string{"--", "-", "b", "--label"}, TapFlags: testTapFlags}
	back, _, err = Unwrap([]byte(legacy), paths.ClaudeDesktop, paths.User, o)
	if err != nil || string(back) != text {
		t.Errorf("legacy unwrap (%v):\n%s\nwant:\n%s", err, back, text)
	}
}

// TestUnwrapAllMarkedOnly: unwrap --all gives back the entry sonde wrap
// wrote (it carries WrapMarker) and leaves an entry pointed at sonde tap by
// hand as it is (NotMarked), and so an entry a sonde without the marker
// wrote; named, those are unwrapped.
func TestUnwrapAllMarkedOnly(t *testing.T) {
	orig := `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "srv"]}, ` +
		`"b": {"command": "sonde", "args": ["tap", "--", "server"]}, ` +
		`"c": {"command": "/usr/local/bin/sonde", "args": ["tap", "--label", "c", "--", "old"]}}}`
	o := WrapOptions{Sonde: testSonde, Servers: []string{"a"}, TapFlags: testTapFlags}
	wrapped, _, err := Wrap([]byte(orig), paths.ClaudeDesktop, paths.User, o)
	if err != nil {
		t.Fatal(err)
	}
	all := WrapOptions{Sonde: testSonde, All: true, TapFlags: testTapFlags}
	back, changes, err := Unwrap(wrapped, paths.ClaudeDesktop, paths.User, all)
	if err != nil || string(back) != orig {
		t.Fatalf("unwrap --all (%v):\n%s\nwant:\n%s", err, back, orig)
	}
	states := map[string]WrapState{}
	for _, c := range changes {
		states[c.Server] = c.State
	}
	if want := map[string]WrapState{"a": Unwrapped, "b": NotMarked, "c": NotMarked}; !reflect.DeepEqual(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	// Wrap leaves an entry that launches sonde tap, marked or not.
	again, changes, err := Wrap(wrapped, paths.ClaudeDesktop, paths.User, all)
	if err != nil || !bytes.Equal(again, wrapped) {
		t.Errorf("wrap --all of a wrapped file (%v):\n%s", err, again)
	}
	for _, c := range changes {
		if c.State != AlreadyWrapped {
			t.Errorf("wrap --all: %q %s", c.Server, c.State)
		}
	}
	named := WrapOptions{Sonde: testSonde, Servers: []string{"b", "c"}, TapFlags: testTapFlags}
	back, _, err = Unwrap([]byte(orig), paths.ClaudeDesktop, paths.User, named)
	want := `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "srv"]}, ` +
		`"b": {"command": "server", "args": []}, ` +
		`"c": {"command": "old", "args": []}}}`
	if err != nil || string(back) != want {
		t.Errorf("unwrap --server b --server c (%v):\n%s\nwant:\n%s", err, back, want)
	}
}

// TestUnwrapByHand: an entry wrapped by hand (other tap flags, sonde on
// the PATH), named, is unwrapped to its command and args; one whose tap
// flags sonde does not know is not changed, and says why.
func TestUnwrapByHand(t *testing.T) {
	text := `{"mcpServers": {"a": {"command": "sonde", "args": ["tap", "--record", "/tmp/s.jsonl", "--no-record", "--label=--", "--", "npx", "-y", "srv"]}}}`
	o := WrapOptions{Sonde: testSonde, Servers: []string{"a"}, TapFlags: testTapFlags}
	out, changes, err := Unwrap([]byte(text), paths.ClaudeDesktop, paths.User, o)
	if err != nil || changes[0].State != Unwrapped {
		t.Fatalf("%v %+v", err, changes)
	}
	if want := `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "srv"]}}}`; string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	text = `{"mcpServers": {"a": {"command": "sonde", "args": ["tap", "--frobnicate", "--", "--", "npx"]}}}`
	out, changes, err = Unwrap([]byte(text), paths.ClaudeDesktop, paths.User, o)
	if err != nil || len(changes) != 1 || changes[0].State != Skipped || !errors.Is(changes[0].Err, ErrShape) || string(out) != text {
		t.Errorf("unknown tap flag: %v %+v\n%s", err, changes, out)
	}
}
