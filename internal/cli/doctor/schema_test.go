package doctor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/mcp"
)

// TestSchemaProblems: each tool's schemas are JSON Schemas of type object;
// a broken one is named with its tool and what is wrong.
func TestSchemaProblems(t *testing.T) {
	tool := func(name, in, out string) mcp.Tool {
		t := mcp.Tool{Name: name, InputSchema: json.RawMessage(in)}
		if out != "" {
			t.OutputSchema = json.RawMessage(out)
		}
		return t
	}
	tools := []mcp.Tool{
		tool("ok", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object"}`),
		tool("draft7", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"integer"}}}`, ""),
		tool("typo", `{"type":"object","properties":{"x":{"type":"strnig"}}}`, ""),
		tool("array-out", `{"type":"object"}`, `{"type":"array"}`),
		tool("no-type", `{"properties":{}}`, ""),
		tool("remote", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, ""),
		{Name: "missing"},
		tool("not-object", `[1]`, ""),
	}
	got := schemaProblems(tools)
	want := []string{
		"typo: inputSchema is not a valid JSON Schema: at '/properties/x/type': value must be one of 'array', ",
		`array-out: outputSchema has type "array"; MCP asks for "object"`,
		`no-type: inputSchema has type none; MCP asks for "object"`,
		"remote: inputSchema is not a valid JSON Schema: ",
		"missing: no inputSchema",
		"not-object: inputSchema is not a JSON object",
	}
	if len(got) != len(want) {
		t.Fatalf("problems:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d %q, want it to start with %q", i, got[i], want[i])
		}
	}
	t.Log(strings.Join(got, "\n"))
}
