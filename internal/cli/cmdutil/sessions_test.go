package cmdutil_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestCaptureArg: a file that exists, or a path, is taken as it is; else
// a session of $SONDE_HOME/sessions by its id (with or without .jsonl) or
// the start of one id; the start of several is a usage error; anything
// else is left for the caller to report missing.
func TestCaptureArg(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	t.Setenv("SONDE_HOME", home)
	t.Chdir(cwd)
	dir := filepath.Join(home, "sessions")
	for _, name := range []string{"gh-20261201-143007-4242.jsonl", "gh-20261201-150000-4343.jsonl", "db-20261201-143007-5.jsonl", "gh-20261201-143007-4242.jsonl.sonde-backup"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cwd, "db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"gh-20261201-143007-4242", filepath.Join(dir, "gh-20261201-143007-4242.jsonl")},
		{"gh-20261201-143007-4242.jsonl", filepath.Join(dir, "gh-20261201-143007-4242.jsonl")},
		{"gh-20261201-15", filepath.Join(dir, "gh-20261201-150000-4343.jsonl")},
		{"db", "db"}, // a file of the working folder wins
		{"db-2", filepath.Join(dir, "db-20261201-143007-5.jsonl")},
		{"./db-2", "./db-2"}, // a path
		{"zz", "zz"},
	} {
		got, err := cmdutil.CaptureArg(tc.arg)
		if err != nil || got != tc.want {
			t.Errorf("CaptureArg(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
		}
	}
	_, err := cmdutil.CaptureArg("gh")
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) || ue.Msg != `"gh" begins 2 sessions of `+dir+`: gh-20261201-143007-4242, gh-20261201-150000-4343; give more of the id (sonde sessions lists them)` {
		t.Errorf("ambiguous: %v", err)
	}
}
