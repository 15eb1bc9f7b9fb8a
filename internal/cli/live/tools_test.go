package live_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// documentedTools are the tools docs/fixtures.md promises, in the order the
// fixture lists them (it may list more after them).
var documentedTools = []string{"echo", "add", "progress", "fail", "tool-error", "big"}

// fixtureTools asks the fixture itself (`sonde fixture` in-process, one
// tools/list on stdin) for its tool names, in its order: what sonde must
// show, over one page or many.
func fixtureTools(t *testing.T) []string {
	t.Helper()
	r := clitest.RunSonde(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n", "fixture")
	var resp struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &resp); err != nil || r.Code != 0 || resp.Result.NextCursor != "" {
		t.Fatalf("the fixture's tools/list: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	var names []string
	for _, tool := range resp.Result.Tools {
		names = append(names, tool.Name)
	}
	if len(names) < len(documentedTools) || !slices.Equal(names[:len(documentedTools)], documentedTools) {
		t.Fatalf("the fixture lists %q, want %q first", names, documentedTools)
	}
	return names
}

// TestTools lists the fixture's tools as text and JSON, over one page and
// over several.
func TestTools(t *testing.T) {
	listRE := regexp.MustCompile(`(?m)-> id \d+ +tools/list `)
	all := fixtureTools(t)
	pages := func(size int) int { return (len(all) + size - 1) / size }
	cases := []struct {
		name     string
		sub      []string
		fixture  []string
		json     bool
		requests int // tools/list requests seen in --trace
	}{
		{name: "text", sub: []string{"tools", "--trace"}, requests: 1},
		{name: "text over pages", sub: []string{"tools", "--trace"}, fixture: []string{"--page-size", "2"}, requests: pages(2)},
		{name: "json", sub: []string{"tools", "--json", "--trace"}, json: true, requests: 1},
		{name: "json over pages", sub: []string{"tools", "--json", "--trace"}, fixture: []string{"--page-size", "4"}, json: true, requests: pages(4)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := clitest.NewFixture(t)
			r := clitest.RunSonde(t, "", f.Cmd(tc.sub, tc.fixture...)...)
			if r.Code != cmdutil.ExitOK || clitest.SondeLine(r.Stderr) != "" {
				t.Fatalf("exit %d, stderr:\n%s", r.Code, r.Stderr)
			}
			if n := len(listRE.FindAllString(r.Stderr, -1)); n != tc.requests {
				t.Errorf("%d tools/list requests in the trace, want %d:\n%s", n, tc.requests, r.Stderr)
			}
			var names []string
			if tc.json {
				var tools []struct {
					Name        string          `json:"name"`
					Description string          `json:"description"`
					InputSchema json.RawMessage `json:"inputSchema"`
				}
				if err := json.Unmarshal([]byte(r.Stdout), &tools); err != nil {
					t.Fatalf("stdout is not a JSON array of tools: %v\n%s", err, r.Stdout)
				}
				for _, tool := range tools {
					names = append(names, tool.Name)
					if tool.Description == "" || !strings.HasPrefix(string(tool.InputSchema), "{") {
						t.Errorf("tool %s: description %q, inputSchema %s", tool.Name, tool.Description, tool.InputSchema)
					}
				}
			} else {
				for _, line := range strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n") {
					name, desc, _ := strings.Cut(line, " ")
					names = append(names, name)
					if strings.TrimSpace(desc) == "" {
						t.Errorf("line %q has no description", line)
					}
				}
			}
			if !slices.Equal(names, all) {
				t.Errorf("tools %q, want %q\nstdout:\n%s", names, all, r.Stdout)
			}
		})
	}
}

// TestToolsText checks the text layout: name, then the first line of the
// description in an aligned column.
func TestToolsText(t *testing.T) {
	r := clitest.NewFixture(t).RunChecked("", []string{"tools"}, nil, cmdutil.ExitOK, "")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if want := len(fixtureTools(t)); len(lines) != want {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), want, r.Stdout)
	}
	if want := "echo          Returns value after delay_ms; concurrent calls with different delays answer out of order."; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if want := "fail          Answers with JSON-RPC error -32001."; lines[3] != want {
		t.Errorf("fourth line %q, want %q", lines[3], want)
	}
}
