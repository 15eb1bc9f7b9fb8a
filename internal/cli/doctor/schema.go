package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
)

// refuseLoad is the schema loader of the tool schemas step: a tool's
// schema is checked on its own, nothing is fetched (a host does not fetch
// either).
type refuseLoad struct{}

func (refuseLoad) Load(url string) (any, error) {
	return nil, fmt.Errorf("refers to %s, which sonde does not fetch", url)
}

// schemaProblems checks the inputSchema and outputSchema of each tool: a
// JSON object, a valid JSON Schema (draft 2020-12 unless its $schema names
// another, as MCP says), of type "object". Each problem names its tool and
// schema.
func schemaProblems(tools []mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		name := textfmt.Clean(t.Name)
		if len(t.InputSchema) == 0 {
			out = append(out, name+": no inputSchema (MCP requires one, at least {\"type\":\"object\"})")
		} else if p := schemaProblem(t.InputSchema); p != "" {
			out = append(out, name+": inputSchema "+p)
		}
		if len(t.OutputSchema) > 0 {
			if p := schemaProblem(t.OutputSchema); p != "" {
				out = append(out, name+": outputSchema "+p)
			}
		}
	}
	return out
}

// schemaProblem says what is wrong with one schema, or "".
func schemaProblem(raw json.RawMessage) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return "is not a JSON object"
	}
	if typ := strings.TrimSpace(string(top["type"])); typ != `"object"` {
		if typ == "" {
			typ = "none"
		}
		return "has type " + textfmt.Clean(typ) + `; MCP asks for "object"`
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "is not JSON: " + err.Error()
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoad{})
	const url = "mem://tool/schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return "is not a valid JSON Schema: " + firstLine(err.Error())
	}
	if _, err := c.Compile(url); err != nil {
		return "is not a valid JSON Schema: " + firstLine(err.Error())
	}
	return ""
}

// firstLine is the first thing a compiler error found: the first line
// of its tree that has nothing under it ("at '/properties/x/type': value
// must be one of …"), with how many more there are; the error's own first
// line when it has no tree.
func firstLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	var leaves []string
	for i, l := range lines {
		if i > 0 && strings.HasPrefix(strings.TrimSpace(l), "- ") && (i == len(lines)-1 || indent(lines[i+1]) <= indent(l)) {
			leaves = append(leaves, strings.TrimPrefix(strings.TrimSpace(l), "- "))
		}
	}
	if len(leaves) == 0 {
		return textfmt.Clean(strings.TrimSpace(lines[0]))
	}
	out := leaves[0]
	if len(leaves) > 1 {
		out += fmt.Sprintf(" (and %d more)", len(leaves)-1)
	}
	return textfmt.Clean(out)
}
