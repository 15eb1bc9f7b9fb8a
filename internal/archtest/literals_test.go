package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// closedFields are the fields that hold a closed set with constants of its
// own: a fault's action (client.FaultAction), a message's kind
// (jsonrpc.Kind, capture.Kind*), a direction (client.Direction,
// capture.Dir*), a capture record's or process event's What, a command
// event's phase. A string literal compared with one of them is a word the
// set's owner can change without the compiler noticing.
var closedFields = map[string]bool{"Action": true, "Kind": true, "Dir": true, "What": true, "Phase": true}

// notClosed are the fields of those names that are no closed set's, by
// file and field: the check matches names, not types.
var notClosed = map[string]string{
	"fixtures/confirm.go .Action":    "an elicitation's answer, MCP's words, read by a test server",
	"internal/cli/tap/watch.go .Dir": "a folder, not a direction",
}

// TestNoLiteralClosedSets: no non-test file compares a string literal
// with (==, !=, switch/case) a closed set's field; it names the constant.
func TestNoLiteralClosedSets(t *testing.T) {
	for _, f := range literalComparisons(t, "../..") {
		file, rest, _ := strings.Cut(f, ":")
		_, rest, _ = strings.Cut(rest, ": ")
		field, _, _ := strings.Cut(rest, " ")
		if _, ok := notClosed[file+" "+field]; !ok {
			t.Error(f)
		}
	}
}

// TestLiteralComparisonsFails shows the check finding each form of the
// comparison, and passing over a test file, a constant and another field.
func TestLiteralComparisonsFails(t *testing.T) {
	root := t.TempDir()
	src := `package a

const close = "close"

func f(ev struct{ Action, What, Kind, Dir, Name string }) int {
	if ev.Action == "close" || "exit" != ev.What || ev.Action == close || ev.Name == "x" {
		return 1
	}
	switch ev.Kind {
	case "response", "request":
		return 2
	case close:
	}
	switch {
	case ev.Dir == "in":
	}
	return 0
}
`
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.go": src, "a_test.go": src} {
		if err := os.WriteFile(filepath.Join(root, "a", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(literalComparisons(t, root), "; ")
	want := `a/a.go:6: .Action == "close"; a/a.go:6: .What != "exit"; a/a.go:10: .Kind case "response"; a/a.go:10: .Kind case "request"; a/a.go:15: .Dir == "in"`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// eachGoFile parses every Go file below root (not under testdata,
// node_modules or a dot folder) and gives fn its slash path from root and
// whether it is a test file.
func eachGoFile(t *testing.T, root string, fn func(rel string, fset *token.FileSet, file *ast.File, test bool)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), fset, file, strings.HasSuffix(path, "_test.go"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// literalComparisons lists, for each non-test Go file under root, where a
// string literal is compared with a closed set's field.
func literalComparisons(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	eachGoFile(t, root, func(rel string, fset *token.FileSet, file *ast.File, test bool) {
		if test {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			for _, c := range comparisons(n) {
				found = append(found, fmt.Sprintf("%s:%d: %s", rel, fset.Position(c.pos).Line, c.what))
			}
			return true
		})
	})
	sort.SliceStable(found, func(i, j int) bool { return strings.SplitN(found[i], ":", 2)[0] < strings.SplitN(found[j], ":", 2)[0] })
	return found
}

// comparison is one literal compared with a closed field.
type comparison struct {
	pos  token.Pos
	what string
}

// comparisons is what node n compares: a binary == or != between a closed
// field and a string literal, or a switch on a closed field with a string
// literal case.
func comparisons(n ast.Node) []comparison {
	switch n := n.(type) {
	case *ast.BinaryExpr:
		if n.Op != token.EQL && n.Op != token.NEQ {
			return nil
		}
		for _, p := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
			if f, ok := closedField(p[0]); ok {
				if lit, ok := p[1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					return []comparison{{n.Pos(), "." + f + " " + n.Op.String() + " " + lit.Value}}
				}
			}
		}
	case *ast.SwitchStmt:
		f, ok := closedField(n.Tag)
		if !ok {
			return nil
		}
		var out []comparison
		for _, s := range n.Body.List {
			for _, e := range s.(*ast.CaseClause).List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out = append(out, comparison{lit.Pos(), "." + f + " case " + lit.Value})
				}
			}
		}
		return out
	}
	return nil
}

// closedField is the name of the closed field e selects, if it selects one.
func closedField(e ast.Expr) (string, bool) {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || !closedFields[s.Sel.Name] {
		return "", false
	}
	return s.Sel.Name, true
}
