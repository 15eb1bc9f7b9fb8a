package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayBadCapture: a capture that cannot be read fails before the UI
// opens, naming the file and the reason, with exit status 12; a wrong
// number of arguments is a usage error.
func TestReplayBadCapture(t *testing.T) {
	dir := t.TempDir()
	notCapture := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notCapture, []byte("just some notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.jsonl")
	if err := os.WriteFile(newer, []byte(`{"type":"header","format":"sonde-capture","version":"9.0","start":"2026-01-01T00:00:00Z","transport":"stdio"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.jsonl")
	cases := []struct {
		name    string
		args    []string
		code    int
		errLine string
	}{
		{"missing", []string{"replay", missing}, exitCapture, "sonde: capture " + missing + ": no such file\n"},
		{"not a capture", []string{"replay", notCapture}, exitCapture, "sonde: capture " + notCapture + ": capture line 1: not a sonde capture: the first line is not a JSON header: invalid character 'j' looking for beginning of value\n"},
		{"newer", []string{"replay", newer}, exitCapture, "sonde: capture " + newer + ": capture line 1: capture format is newer than this sonde: version 9.0; this sonde reads version 1.x and older (upgrade sonde)\n"},
		{"no file", []string{"replay"}, exitUsage, "sonde: sonde replay takes one capture FILE (see sonde replay --help)\n"},
		{"two files", []string{"replay", "a", "b"}, exitUsage, "sonde: sonde replay takes one capture FILE (see sonde replay --help)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runSonde(t, "", tc.args...)
			checkRun(t, r, tc.code, tc.errLine)
			if r.stdout != "" {
				t.Errorf("stdout = %q (the UI must not open)", r.stdout)
			}
		})
	}
}

// TestReplayHelp: --help names the keys and the exit status.
func TestReplayHelp(t *testing.T) {
	r := runSonde(t, "", "replay", "--help")
	checkRun(t, r, exitOK, "")
	for _, want := range []string{"sonde replay FILE", "play / pause", "step one event back", "next / previous error", "exit\nstatus 12", "12   a capture file that cannot be read"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
}
