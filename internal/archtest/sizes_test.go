package archtest

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The size caps of docs/development.md ("Rules"): a file or a function
// past them does several jobs, and a type with too many methods hides
// which of them hold its lock.
const (
	maxFileLines   = 800
	maxFuncLines   = 80
	maxLongFuncs   = 8
	maxClientMeths = 70 // *client.Client
	maxModelMeths  = 60 // ui.Model
)

// sizes is what the caps are judged on, for the non-test Go files below
// root.
type sizes struct {
	longFiles []string       // "path: N lines"
	longFuncs []string       // "path Func: N lines"
	methods   map[string]int // "pkgdir.Type" → methods (test files too)
}

func measure(t *testing.T, root string) sizes {
	t.Helper()
	s := sizes{methods: map[string]int{}}
	eachGoFile(t, root, func(rel string, fset *token.FileSet, file *ast.File, test bool) {
		if n := fset.File(file.Pos()).LineCount(); !test && n > maxFileLines {
			s.longFiles = append(s.longFiles, fmt.Sprintf("%s: %d lines", rel, n))
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				s.methods[path.Dir(rel)+"."+recvName(fn.Recv.List[0].Type)]++
			}
			if test || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				s.longFuncs = append(s.longFuncs, fmt.Sprintf("%s %s: %d lines", rel, fn.Name.Name, lines))
			}
		}
	})
	sort.Strings(s.longFiles)
	sort.Strings(s.longFuncs)
	return s
}

// recvName is a receiver's type name without its pointer or type
// parameters.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestSizeCaps: no non-test file over 800 lines, at most 8 functions over
// 80 lines, *client.Client at most 70 methods, ui.Model at most 60 (test
// files' methods count: they are methods of the type too).
func TestSizeCaps(t *testing.T) {
	s := measure(t, "../..")
	for _, f := range s.longFiles {
		t.Errorf("file over %d lines: %s", maxFileLines, f)
	}
	if len(s.longFuncs) > maxLongFuncs {
		t.Errorf("%d functions over %d lines (at most %d):\n%s", len(s.longFuncs), maxFuncLines, maxLongFuncs, strings.Join(s.longFuncs, "\n"))
	}
	for typ, most := range map[string]int{"client.Client": maxClientMeths, "ui.Model": maxModelMeths} {
		n, ok := s.methods[typ]
		if !ok {
			t.Errorf("%s: no methods found (moved? update this test)", typ)
		}
		if n > most {
			t.Errorf("%s has %d methods (at most %d)", typ, n, most)
		}
	}
}

// TestSizeCapsFails: the measure sees a long file, a long function and
// methods in a tree made for it.
func TestSizeCapsFails(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "ui"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("package ui\n\ntype Model struct{}\n\nfunc (m *Model) A() {}\nfunc (Model) B() {}\n\nfunc long() {\n")
	for i := 0; i < maxFileLines; i++ {
		b.WriteString("\t_ = 1\n")
	}
	b.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(root, "ui", "m.go"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s := measure(t, root)
	if len(s.longFiles) != 1 || len(s.longFuncs) != 1 || s.methods["ui.Model"] != 2 {
		t.Fatalf("measure = files %v funcs %v methods %v; want one long file, one long func, 2 methods", s.longFiles, s.longFuncs, s.methods)
	}
}
