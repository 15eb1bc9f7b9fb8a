package archtest

import (
	"strings"
	"testing"
)

// TestModuleImports is the rule of docs/architecture.md: every import of
// sonde's source is one the table allows.
func TestModuleImports(t *testing.T) {
	imports, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 100 {
		t.Fatalf("read only %d imports: is the walk rooted at the module?", len(imports))
	}
	for _, bad := range Check(Rules(), imports) {
		t.Error(bad)
	}
}

// TestCheckFails shows the check failing on forbidden imports: a fold
// reaching transport, the UI reaching transport, a leaf importing a library,
// a package importing the command line, a test helper in shipped code, and
// a package without a rule.
func TestCheckFails(t *testing.T) {
	m := Module + "/"
	cases := []struct {
		im   Import
		want string
	}{
		{Import{m + "lint", m + "transport", "lint/x.go"}, "lint may not import transport"},
		{Import{m + "ui/frames", m + "transport", "ui/frames/x.go"}, "ui/frames may not import transport"},
		{Import{m + "jsonrpc", "github.com/x/y", "jsonrpc/x.go"}, "outside the module"},
		{Import{m + "client", m + "ui", "client/x.go"}, "client may not import ui"},
		{Import{m + "ui", m + "internal/cli/connect", "ui/x.go"}, "imported only by main"},
		{Import{m + "client", m + "internal/proctest", "client/x.go"}, "test helper"},
		{Import{m + "newpkg", "fmt", "newpkg/x.go"}, "has no rule"},
		{Import{m + "internal/cli/live", m + "internal/cli/capfile", "internal/cli/live/x.go"}, "live may not import internal/cli/capfile"},
		{Import{m + "internal/cli/connect", m + "internal/cli/live", "internal/cli/connect/x.go"}, "connect may not import internal/cli/live"},
		{Import{m + "internal/cli/cmdutil", m + "internal/cli", "internal/cli/cmdutil/x.go"}, "cmdutil may not import internal/cli"},
		{Import{m + "internal/cli/tap", m + "internal/cli/live", "internal/cli/tap/x.go"}, "tap may not import internal/cli/live"},
		{Import{m + "internal/cli/live", m + "tap", "internal/cli/live/x.go"}, "live may not import tap"},
		{Import{m + "tap", m + "ui", "tap/x.go"}, "tap may not import ui"},
		{Import{m + "client", m + "tap", "client/x.go"}, "client may not import tap"},
	}
	for _, c := range cases {
		got := Check(Rules(), []Import{c.im})
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("Check(%v) = %q, want one line containing %q", c.im, got, c.want)
		}
	}
	allowed := []Import{
		{m + "client", m + "transport", "client/x.go"},
		{m + "ui/frames", m + "lint", "ui/frames/x.go"},
		{Module, m + "internal/cli", "main.go"},
		{m + "internal/cli/connect", m + "transport", "internal/cli/connect/x.go"},
		{m + "internal/cli/live", m + "internal/cli/connect", "internal/cli/live/x.go"},
		{m + "internal/cli", m + "internal/cli/live", "internal/cli/x.go"},
		{m + "internal/cli/tap", m + "tap", "internal/cli/tap/x.go"},
		{m + "tap", m + "capture", "tap/x.go"},
		{m + "jsonrpc", "encoding/json", "jsonrpc/x.go"},
	}
	if got := Check(Rules(), allowed); len(got) != 0 {
		t.Errorf("allowed imports reported: %q", got)
	}
}
