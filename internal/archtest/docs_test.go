package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of README.md and docs/*.md names a file
// of the tree, and every #anchor a heading of the page it names (as GitHub
// makes anchors), so moving a section cannot leave a dead link behind.
func TestDocLinks(t *testing.T) {
	root := "../.."
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	if len(pages) < 10 {
		t.Fatalf("found only %d pages", len(pages))
	}
	for _, page := range pages {
		for _, bad := range deadLinks(t, page) {
			t.Errorf("%s: dead link %s", page, bad)
		}
	}
}

// TestDeadLinksFails shows the check finding a missing file and a missing
// anchor.
func TestDeadLinksFails(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.md")
	text := "# Top\n## Over HTTP\n[ok](#over-http) [ok](b.md#the-end) [bad](#nowhere) [bad](c.md) [web](https://x.invalid/y)\n"
	if err := os.WriteFile(page, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("# The end\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(deadLinks(t, page), " ")
	if got != "#nowhere c.md" {
		t.Fatalf("dead links %q, want #nowhere and c.md", got)
	}
}

// deadLinks returns the relative links of page that name no file or no
// heading.
func deadLinks(t *testing.T, page string) []string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := page
		if file != "" {
			path = filepath.Join(filepath.Dir(page), file)
			if _, err := os.Stat(path); err != nil {
				bad = append(bad, target)
				continue
			}
		}
		if anchor != "" && strings.HasSuffix(path, ".md") && !hasAnchor(t, path, anchor) {
			bad = append(bad, target)
		}
	}
	return bad
}

// hasAnchor reports whether a heading of the Markdown file at path has the
// anchor GitHub gives it: lower case, punctuation dropped, spaces as "-".
func hasAnchor(t *testing.T, path, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fence := false
	for line := range strings.SplitSeq(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}
