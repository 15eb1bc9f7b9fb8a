// Package archtest holds sonde's import rules (docs/architecture.md) and the
// check that enforces them: its test walks the module's source and fails on
// any import the table does not allow.
package archtest

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Module is sonde's module path.
const Module = "github.com/sonde-mcp/sonde"

// A Rule says what the packages matching Pkg may import from the module
// (Internal), and whether they may import anything beyond the standard
// library (External: a list of allowed path prefixes; nil means none).
// Patterns are module-relative: "client" is that package, "ui/..." is ui
// and everything below it, "." is the root.
type Rule struct {
	Pkg      string
	Internal []string
	External []string
}

// testHelpers are the packages that exist for tests: they may import
// anything, and only test files may import them.
var testHelpers = []string{
	"internal/capturegen", "internal/capturetest", "internal/fixturetest",
	"internal/golden", "internal/peertest", "internal/proctest", "internal/cli/clitest", "internal/memtest", "internal/uitest", "internal/otlptest", "internal/browsertest",
}

// charm is the UI stack.
var charm = []string{"charm.land/", "github.com/charmbracelet/", "github.com/sahilm/fuzzy", "github.com/santhosh-tekuri/jsonschema/"}

// folds are the packages that fold client events or capture files: they
// see the session through client's types, never through transport's.
var folds = []string{"client", "jsonrpc", "mcp", "internal/textfmt", "internal/lines", "capture", "replay", "lint", "diff", "surface"}

// families is what a command family may import of the command line.
var families = []string{"internal/cli/cmdutil", "internal/cli/connect"}

// notCLI is every module package outside internal/cli, plus the given
// packages of internal/cli.
func notCLI(cli ...string) []string {
	return append([]string{
		".", "jsonrpc", "mcp", "transport/...", "client", "capture", "lint", "stats", "diagram",
		"replay/...", "ui/...", "hostconfig", "fixtures", "internal/paths", "internal/textfmt",
		"internal/ring", "internal/lines", "internal/loopback", "chaos", "diff", "gate", "manager", "observe", "filter", "surface", "sessions", "hold", "report/...", "timeouts", "clients",
	}, cli...)
}

// Rules is the import table. The first rule whose Pkg matches a package
// applies; a package no rule matches is a failure (a new package states
// its place here).
func Rules() []Rule {
	return []Rule{
		{Pkg: ".", Internal: []string{"internal/cli", "fixtures"}},
		{Pkg: "jsonrpc"},
		{Pkg: "mcp"},
		{Pkg: "fixtures"},
		{Pkg: "internal/paths"},
		// The folder sonde tap records into: session ids, creating,
		// listing (what each recording holds), resolving a prefix,
		// whether a tap still runs, following a growing recording.
		{Pkg: "sessions", Internal: []string{"capture", "client", "jsonrpc", "mcp", "internal/paths"}, External: []string{"golang.org/x/sys/"}},
		{Pkg: "internal/ring"},
		{Pkg: "internal/lines"},
		{Pkg: "internal/loopback"},
		{Pkg: "internal/textfmt", External: []string{"charm.land/lipgloss/", "github.com/charmbracelet/x/ansi"}},
		{Pkg: "hostconfig", Internal: []string{"internal/paths"}, External: []string{"github.com/pelletier/go-toml/v2", "go.yaml.in/yaml/v3"}},
		{Pkg: "transport/...", Internal: []string{"jsonrpc", "transport/...", "internal/lines", "internal/loopback"}, External: []string{"golang.org/x/sys/", "golang.org/x/oauth2", "github.com/go-jose/go-jose/v4"}},
		{Pkg: "client", Internal: []string{"transport/...", "jsonrpc", "mcp"}},
		// Several servers at once, above one client each: the restart
		// policy, routing, the failure report.
		{Pkg: "manager", Internal: []string{"client", "transport", "hostconfig", "jsonrpc", "mcp"}},
		// The line reader is the one piece of transport a mock server needs.
		{Pkg: "replay/serve", Internal: append([]string{"transport", "internal/loopback", "hold"}, folds...)},
		{Pkg: "capture", Internal: folds},
		{Pkg: "lint", Internal: folds, External: []string{"github.com/santhosh-tekuri/jsonschema/"}},
		{Pkg: "stats", Internal: folds},
		// Client timeout policies over a session's recorded timing
		// (sonde timeouts): a fold, events in, verdicts out.
		{Pkg: "timeouts", Internal: folds},
		// What tapped sessions showed of their hosts (sonde clients): a fold.
		{Pkg: "clients", Internal: folds},
		{Pkg: "diagram", Internal: folds},
		// What a session showed of its server (info, capabilities, the
		// lists): the one fold diff, gate and replay read it through.
		{Pkg: "surface", Internal: []string{"client", "jsonrpc", "mcp"}},
		// What a session showed, compared (sonde diff, drift, context
		// cost): a fold like lint.
		{Pkg: "diff", Internal: folds},
		// The CI verdict over folds: results, --fail-on, JUnit and SARIF,
		// baselines. Only the command line imports it.
		{Pkg: "gate", Internal: folds},
		{Pkg: "replay/...", Internal: append([]string{"hold"}, folds...)},
		// The tap's core: the process and framing of transport, the
		// client's passive Observer, the recorder. Only its command
		// (internal/cli/tap) imports it.
		{Pkg: "tap", Internal: []string{"transport", "client", "capture", "jsonrpc", "mcp", "chaos", "hold", "internal/loopback"}},
		// OpenTelemetry: client events folded into spans and metrics, the
		// official SDK and its OTLP exporters (docs/otel.md).
		{Pkg: "observe", Internal: []string{"client", "jsonrpc", "mcp"}, External: []string{"go.opentelemetry.io/", "google.golang.org/protobuf/"}},
		// The fault rules of sonde tap --fault: a language and a decision
		// per line, no processes, no pipes (client for the action's type).
		{Pkg: "chaos", Internal: []string{"jsonrpc", "client"}},
		// Breakpoints and the frames they hold (docs/breakpoints.md): a
		// decision per frame and the held frames' fates, no I/O
		// (transport for the Conn a client session holds through).
		{Pkg: "hold", Internal: []string{"client", "filter", "jsonrpc", "transport"}},
		// The filter language (docs/filter.md): a query over client events.
		{Pkg: "filter", Internal: []string{"client", "jsonrpc", "mcp", "internal/textfmt"}},
		// The HTML report and the HAR of sonde export (docs/export.md):
		// drawings of what the folds computed, no check of their own.
		{Pkg: "report/...", Internal: append([]string{"filter", "stats", "diagram"}, folds...)},
		// sonde mcp (docs/mcp.md): sonde's inspector as MCP tools, on the
		// official Go SDK. Sessions are opened by the command line
		// (Options.Open), so it never imports internal/cli.
		{Pkg: "mcpserver", Internal: append([]string{"filter", "stats", "diagram", "replay/...", "hostconfig", "sessions", "chaos", "internal/ring", "internal/paths", "internal/loopback"}, folds...), External: []string{"github.com/modelcontextprotocol/go-sdk/", "golang.org/x/sys/"}},
		{Pkg: "ui/...", Internal: append([]string{"ui/...", "internal/ring", "filter", "hold", "timeouts"}, folds...), External: charm},
		// The command line: cmdutil at the bottom, connect on it, the
		// families (which never import each other) on both, the root
		// command on top. Below internal/cli, anything.
		{Pkg: "internal/cli/cmdutil", Internal: notCLI("internal/cli/cmdutil"), External: []string{""}},
		{Pkg: "internal/cli/connect", Internal: notCLI("internal/cli/cmdutil"), External: []string{""}},
		{Pkg: "internal/cli/live", Internal: notCLI(families...), External: []string{""}},
		{Pkg: "internal/cli/capfile", Internal: notCLI(families...), External: []string{""}},
		{Pkg: "internal/cli/interactive", Internal: notCLI(families...), External: []string{""}},
		{Pkg: "internal/cli/config", Internal: notCLI(families...), External: []string{""}},
		{Pkg: "internal/cli/doctor", Internal: notCLI(families...), External: []string{""}},
		{Pkg: "internal/cli/tap", Internal: notCLI(append([]string{"tap"}, families...)...), External: []string{""}},
		{Pkg: "internal/cli/...", Internal: []string{"..."}, External: []string{""}},
		{Pkg: "internal/...", Internal: []string{"..."}, External: []string{""}}, // test helpers
	}
}

// Match reports whether the module-relative package path pkg matches
// pattern ("x" exactly, "x/..." x and below, "..." anything).
func Match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if Match(p, pkg) {
			return true
		}
	}
	return false
}

// An Import is one import of one non-test file: From and To are import
// paths; File names the file.
type Import struct {
	From, To, File string
}

// Check returns one line per import the rules do not allow, sorted.
func Check(rules []Rule, imports []Import) []string {
	var bad []string
	for _, im := range imports {
		from := rel(im.From)
		rule, ok := find(rules, from)
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: package %s has no rule in internal/archtest", im.File, from))
			continue
		case strings.HasPrefix(im.To, Module+"/") || im.To == Module:
			to := rel(im.To)
			switch {
			case matchAny(testHelpers, to) && !matchAny(testHelpers, from):
				bad = append(bad, fmt.Sprintf("%s: %s imports test helper %s", im.File, from, to))
			case Match("internal/cli/...", to) && from != "." && !Match("internal/cli/...", from) && !matchAny(testHelpers, from):
				bad = append(bad, fmt.Sprintf("%s: %s imports %s (the command line is imported only by main)", im.File, from, to))
			case to != from && !matchAny(rule.Internal, to):
				bad = append(bad, fmt.Sprintf("%s: %s may not import %s", im.File, from, to))
			}
		case isStd(im.To):
		default:
			if !hasPrefixAny(im.To, rule.External) {
				bad = append(bad, fmt.Sprintf("%s: %s may not import %s (outside the module and the standard library)", im.File, from, im.To))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func find(rules []Rule, pkg string) (Rule, bool) {
	for _, r := range rules {
		if Match(r.Pkg, pkg) {
			return r, true
		}
	}
	return Rule{}, false
}

func rel(importPath string) string {
	if importPath == Module {
		return "."
	}
	return strings.TrimPrefix(importPath, Module+"/")
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isStd reports whether an import path is the standard library's (no dot
// in its first element).
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// Load parses the imports of every non-test Go file of the module rooted
// at dir (all build tags and platforms; testdata, node_modules and hidden
// folders skipped).
func Load(dir string) ([]Import, error) {
	var out []Import
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != dir && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != dir {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		r, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		from := Module
		if r != "." {
			from = path.Join(Module, filepath.ToSlash(r))
		}
		for _, s := range f.Imports {
			to, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return err
			}
			out = append(out, Import{From: from, To: to, File: filepath.ToSlash(filepath.Join(r, name))})
		}
		return nil
	})
	return out, err
}
