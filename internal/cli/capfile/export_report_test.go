package capfile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestExportHTMLAndHAR runs `sonde export --format html` and `--format
// har` as a user does: the page to -o or stdout, the HAR of an HTTP
// session, a stdio session refused for HAR with exit status 2, and the
// flags that do not apply refused before anything is read.
func TestExportHTMLAndHAR(t *testing.T) {
	stdio := recordCall(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "bug.html")
	r := clitest.RunSonde(t, "", "export", "--format", "html", "-o", out, stdio)
	page, err := os.ReadFile(out)
	if r.Code != 0 || err != nil || !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(r.Stderr, "sonde: wrote "+out) {
		t.Fatalf("export --format html -o: %d %v\n%s", r.Code, err, r.Stderr)
	}
	if r := clitest.RunSonde(t, "", "export", "--format", "html", stdio); r.Code != 0 || r.Stdout != string(page) {
		t.Errorf("export --format html to stdout: %d, %d bytes (the file has %d)\n%s", r.Code, len(r.Stdout), len(page), r.Stderr)
	}
	r = clitest.RunSonde(t, "", "export", "--format", "har", stdio)
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "a stdio session has no HTTP exchanges") {
		t.Errorf("export --format har of stdio: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	httpCap := capturetest.Record(t, capturetest.Options{HTTP: true}, func(ctx context.Context, c *client.Client) {
		if _, err := c.Initialize(ctx); err != nil {
			t.Fatal(err)
		}
	})
	r = clitest.RunSonde(t, "", "export", "--format", "har", httpCap)
	var doc struct {
		Log struct {
			Version string
			Entries []json.RawMessage
		}
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &doc) != nil || doc.Log.Version != "1.2" || len(doc.Log.Entries) < 2 {
		t.Errorf("export --format har: %d %s\n%.400s", r.Code, r.Stderr, r.Stdout)
	}
	for _, args := range [][]string{
		{"--format", "html", "--filter", "status:error"}, {"--format", "har", "--from", "1s"}, {"-o", out},
		{"--format", "html", "-o", filepath.Join(dir, "missing", "x.html")},
	} {
		if r := clitest.RunSonde(t, "", append(append([]string{"export"}, args...), stdio)...); r.Code != 2 || r.Stdout != "" {
			t.Errorf("export %v: %d %q", args, r.Code, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("a failed -o left something behind")
	}
}
