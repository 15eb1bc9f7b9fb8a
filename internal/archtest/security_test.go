package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testName is a test or fuzz target named in prose.
var testName = regexp.MustCompile(`\b(?:Test|Fuzz)[A-Z][A-Za-z0-9_]*`)

// testFile is a test file named in backquotes: `folder/name_test.go`, or
// `name_test.go` in the folder of the one before it.
var testFile = regexp.MustCompile("`([A-Za-z0-9_./-]*_test\\.go)`")

// TestSecurityRulesNameRealTests: every test docs/security.md names as the
// holder of a rule exists, in the file the rule's line names when it names
// one, so that a renamed or deleted test cannot leave a rule standing on
// nothing.
func TestSecurityRulesNameRealTests(t *testing.T) {
	root := "../.."
	text, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	missing := missingTests(t, root, string(text))
	for _, m := range missing {
		t.Errorf("docs/security.md: %s", m)
	}
	if n := len(testName.FindAllString(string(text), -1)); n < 40 {
		t.Errorf("docs/security.md names only %d tests", n)
	}
}

// TestMissingTestsFails shows the check finding a test that is not in the
// file named, and one that is nowhere.
func TestMissingTestsFails(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "x_test.go"), []byte("package a\nfunc TestHere(t *testing.T) {}\nfunc FuzzHere(f *testing.F) {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "y_test.go"), []byte("package a\nfunc TestElsewhere(t *testing.T) {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := "- `a/x_test.go`: TestHere, FuzzHere; `y_test.go`: TestElsewhere\n- `a/x_test.go`: TestElsewhere\n\nTestGone and TestElsewhere (`a/x_test.go`) FuzzHere in prose.\n"
	got := strings.Join(missingTests(t, root, doc), "; ")
	want := "TestElsewhere is not in a/x_test.go; TestGone is in no test file"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// missingTests checks each test named in doc: on a list item that names a
// test file, in that file (up to the next file named); elsewhere, in some
// test file of the tree under root.
func missingTests(t *testing.T, root, doc string) []string {
	t.Helper()
	defined := map[string]map[string]bool{} // file (slash path from root) → names
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		names := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`).FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		defined[filepath.ToSlash(rel)] = names
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anywhere := func(name string) bool {
		for _, names := range defined {
			if names[name] {
				return true
			}
		}
		return false
	}
	var missing []string
	file, dir, item := "", "", false
	for line := range strings.SplitSeq(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "- "):
			item, file = true, "" // a list item: its files hold its tests
		case trimmed == "" || !strings.HasPrefix(line, " "):
			item, file = false, "" // a paragraph: its tests may be anywhere
		}
		// Walk the line's file names and test names in order.
		files := testFile.FindAllStringSubmatchIndex(line, -1)
		names := testName.FindAllStringIndex(line, -1)
		fi := 0
		for _, n := range names {
			for item && fi < len(files) && files[fi][0] < n[0] {
				f := line[files[fi][2]:files[fi][3]]
				if !strings.Contains(f, "/") && dir != "" {
					f = dir + "/" + f
				}
				file, dir = f, filepath.ToSlash(filepath.Dir(f))
				fi++
			}
			name := line[n[0]:n[1]]
			if strings.HasSuffix(line[:n[0]], "`") || strings.HasPrefix(line[n[1]:], "_test") {
				continue // part of a file name
			}
			switch {
			case file != "" && defined[file] == nil:
				missing = append(missing, file+" does not exist")
				file = ""
			case file != "" && !defined[file][name]:
				missing = append(missing, name+" is not in "+file)
			case file == "" && !anywhere(name):
				missing = append(missing, name+" is in no test file")
			}
		}
		for ; item && fi < len(files); fi++ { // a file named after the line's last test
			f := line[files[fi][2]:files[fi][3]]
			if !strings.Contains(f, "/") && dir != "" {
				f = dir + "/" + f
			}
			file, dir = f, filepath.ToSlash(filepath.Dir(f))
		}
	}
	return missing
}
