package cli_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImportRules: the command families never import each other nor the
// root command; connect imports only cmdutil of the command line's
// packages, and cmdutil none.
func TestImportRules(t *testing.T) {
	const cli = "github.com/sonde-mcp/sonde/internal/cli"
	families := []string{"live", "capfile", "interactive", "config"}
	allowed := map[string][]string{"cmdutil": nil, "connect": {"cmdutil"}}
	for _, f := range families {
		allowed[f] = []string{"cmdutil", "connect"}
	}
	for dir, ok := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if path != cli && !strings.HasPrefix(path, cli+"/") {
					continue
				}
				if pkg := strings.TrimPrefix(path, cli+"/"); path == cli || !slices.Contains(ok, pkg) {
					t.Errorf("%s imports %s; %s may import only %v of internal/cli", file, path, dir, ok)
				}
			}
		}
	}
}
