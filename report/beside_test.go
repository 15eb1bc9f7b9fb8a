package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/report"
)

// TestWriteBeside: the page goes beside the capture, named for it; a
// second export takes a new name instead of overwriting the first; a file
// that is not a capture leaves nothing behind.
func TestWriteBeside(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../testdata/captures/out-of-order-late-crash.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	capPath := filepath.Join(dir, "bug.jsonl")
	if err := os.WriteFile(capPath, src, 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := report.WriteBeside(capPath, report.Options{File: "bug.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if first != filepath.Join(dir, "bug.html") {
		t.Fatalf("first export at %s", first)
	}
	if err := os.WriteFile(first, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, err := report.WriteBeside(capPath, report.Options{File: "bug.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if second != filepath.Join(dir, "bug-2.html") {
		t.Fatalf("second export at %s", second)
	}
	if b, _ := os.ReadFile(first); string(b) != "mine" {
		t.Fatalf("the first file was overwritten: %.40q", b)
	}
	page, err := os.ReadFile(second)
	if err != nil || !strings.Contains(string(page), "<!doctype html") && !strings.Contains(string(page), "<!DOCTYPE html") {
		t.Fatalf("not a page (%v): %.80q", err, page)
	}

	bad := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(bad, []byte("not a capture\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := report.WriteBeside(bad, report.Options{}); err == nil {
		t.Fatalf("a file that is not a capture exported to %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.html")); !os.IsNotExist(err) {
		t.Fatalf("a failed export left notes.html (%v)", err)
	}
}
