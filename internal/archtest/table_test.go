package archtest

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// tableHeading is the section of docs/architecture.md whose table lists
// every package of the module with the module packages it imports.
const tableHeading = "## Packages and imports"

// placeholder is the owns cell of a row the check proposes: a row that
// keeps it fails, so the writer says what the package owns.
const placeholder = "(what it owns)"

// TestArchitectureTable: docs/architecture.md's package table names every
// package of the module once, and each row's imports column is exactly the
// module packages its non-test files import. A new package or a new import
// fails here with the row to write.
func TestArchitectureTable(t *testing.T) {
	imports, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseTable(string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range compareTable(moduleImports(imports), doc) {
		t.Error("docs/architecture.md: " + bad)
	}
}

// TestCompareTableFails shows the table check failing on a missing row, a
// row for no package, and a wrong imports column.
func TestCompareTableFails(t *testing.T) {
	m := Module + "/"
	code := moduleImports([]Import{
		{m + "client", m + "transport", "client/x.go"},
		{m + "client", m + "jsonrpc", "client/y.go"},
		{m + "client", "fmt", "client/y.go"},
		{m + "jsonrpc", "encoding/json", "jsonrpc/x.go"},
		{m + "newpkg", m + "client", "newpkg/x.go"},
	})
	text := tableHeading + "\n\n| package | owns | imports |\n|---|---|---|\n" +
		"| `client` | ids | `transport` |\n| `jsonrpc` | wire | — |\n| `gone` | old | — |\n\n## Next\n"
	doc, err := parseTable(text)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(compareTable(code, doc), "\n")
	for _, want := range []string{
		"row `client`: imports column is `transport`, the code imports `jsonrpc`, `transport`",
		"no row for package `newpkg`: add | `newpkg` | (what it owns) | `client` |",
		"row `gone` names no package of the module: remove it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("compareTable reported\n%s\nwant a line %q", got, want)
		}
	}
	if strings.Contains(got, "jsonrpc") && !strings.Contains(got, "`jsonrpc`, `transport`") {
		t.Errorf("a correct row reported: %s", got)
	}
	if _, err := parseTable(tableHeading + "\n| `x` | " + placeholder + " | — |\n"); err == nil {
		t.Error("parseTable took a row that does not say what its package owns")
	}
	if _, err := parseTable("# No table\n"); err == nil {
		t.Error("parseTable found a table in a page without its section")
	}
}

// moduleImports returns, for every package with a non-test file, the
// sorted module packages it imports (itself left out).
func moduleImports(imports []Import) map[string][]string {
	sets := map[string]map[string]bool{}
	for _, im := range imports {
		from := rel(im.From)
		if sets[from] == nil {
			sets[from] = map[string]bool{}
		}
		if im.To == Module || strings.HasPrefix(im.To, Module+"/") {
			if to := rel(im.To); to != from {
				sets[from][to] = true
			}
		}
	}
	out := map[string][]string{}
	for pkg, set := range sets {
		list := []string{}
		for to := range set {
			list = append(list, to)
		}
		sort.Strings(list)
		out[pkg] = list
	}
	return out
}

// parseTable reads the rows of the package table: the first cell a
// package in backticks, the last its imports in backticks ("—" for none).
func parseTable(text string) (map[string][]string, error) {
	_, section, ok := strings.Cut("\n"+text, "\n"+tableHeading+"\n")
	if !ok {
		return nil, fmt.Errorf("no %q section", tableHeading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	rows := map[string][]string{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`") {
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := rows[pkg]; dup {
			return nil, fmt.Errorf("package %s has two rows", pkg)
		}
		if owns := strings.TrimSpace(cells[1]); owns == "" || owns == placeholder {
			return nil, fmt.Errorf("row %s: say what the package owns", pkg)
		}
		list := []string{}
		for item := range strings.SplitSeq(cells[len(cells)-1], ",") {
			if item = strings.Trim(strings.TrimSpace(item), "`"); item != "" && item != "—" {
				list = append(list, item)
			}
		}
		sort.Strings(list)
		rows[pkg] = list
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("the %q section has no rows", tableHeading)
	}
	return rows, nil
}

// compareTable returns one line per difference between the code's imports
// and the table's, sorted, each saying what to write.
func compareTable(code, doc map[string][]string) []string {
	var bad []string
	for pkg, want := range code {
		got, ok := doc[pkg]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("no row for package `%s`: add | `%s` | %s | %s |", pkg, pkg, placeholder, cell(want)))
		case cell(got) != cell(want):
			bad = append(bad, fmt.Sprintf("row `%s`: imports column is %s, the code imports %s", pkg, cell(got), cell(want)))
		}
	}
	for pkg := range doc {
		if _, ok := code[pkg]; !ok {
			bad = append(bad, fmt.Sprintf("row `%s` names no package of the module: remove it", pkg))
		}
	}
	sort.Strings(bad)
	return bad
}

// cell is an imports column as the table writes it.
func cell(pkgs []string) string {
	if len(pkgs) == 0 {
		return "—"
	}
	return "`" + strings.Join(pkgs, "`, `") + "`"
}
