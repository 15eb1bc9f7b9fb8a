package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzResourcePath: whatever URI an agent names, resourcePath answers
// without panicking, and a file it names is one of the server's own
// captures or a session file right in the tap's sessions folder (never
// a path the URI climbed to).
func FuzzResourcePath(f *testing.F) {
	for _, seed := range []string{"sonde://sessions/s1", "sonde://tapped/x-20261202-120000-42", "sonde://tapped/..%2F..%2Fetc%2Fpasswd",
		"sonde://tapped/%2e%2e", "sonde://sessions/%zz", "sonde://tapped/", "file:///etc/passwd", "sonde://tapped/x-2026"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	sess := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sess, 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sess, "x-20261202-120000-42.jsonl"), []byte("{}\n"), 0o600); err != nil {
		f.Fatal(err)
	}
	s := &Server{opts: Options{Host: HostFuncs{SessionsDir: sess}}, res: newResourceState()}
	s.res.paths["s1"] = filepath.Join(dir, "own", "s1.jsonl")
	f.Fuzz(func(t *testing.T, uri string) {
		p, err := s.resourcePath(uri)
		if err != nil {
			return
		}
		if p != s.res.paths["s1"] && filepath.Dir(p) != sess {
			t.Fatalf("%q names %q, outside the sessions folder", uri, p)
		}
	})
}

// FuzzCaptureText: whatever a capture file holds, a resource gives at
// most max bytes of it (and the escapes that make it safe), valid UTF-8,
// whole lines only, and no byte a terminal acts on but \n and \t.
func FuzzCaptureText(f *testing.F) {
	f.Add([]byte("{\"type\":\"header\"}\n{\"raw\":\"\x1b[2J\x7f\xc2\x9b\"}\n"), 16)
	f.Add([]byte("no newline at all"), 8)
	f.Add([]byte("a\nbb\nccc\ndddd\n"), 7)
	f.Add([]byte("\xff\xfe\n\r\n\t\n"), 100)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		path := filepath.Join(dir, "c.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		text, err := captureText(path, max)
		if err != nil {
			if len(data) > max && !strings.Contains(string(data), "\n") {
				return // no first line: said so
			}
			t.Fatalf("captureText: %v", err)
		}
		if !utf8.ValidString(text) || (text != "" && !strings.HasSuffix(text, "\n")) {
			t.Fatalf("%q", text)
		}
		for _, r := range text {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("a control %U passed: %q", r, text)
			}
		}
		if raw := strings.Count(text, "\n"); raw > strings.Count(string(data), "\n") {
			t.Fatalf("more lines than the file: %q", text)
		}
	})
}
