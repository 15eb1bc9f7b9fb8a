package diff

import (
	"encoding/json"
	"slices"

	"github.com/sonde-mcp/sonde/surface"
)

// ToolCost is what one tool costs a model's context, in bytes (not
// tokens): its definition as tools/list sends it (compact JSON), the parts
// of it that are its description and its schemas, and the results of its
// calls so far.
type ToolCost struct {
	Name string `json:"name"`
	// Def is the whole definition, compact JSON.
	Def int `json:"definition_bytes"`
	// Description is the description's text (UTF-8 bytes, unescaped).
	Description int `json:"description_bytes"`
	// InputSchema and OutputSchema are the schemas, compact JSON.
	InputSchema  int `json:"input_schema_bytes"`
	OutputSchema int `json:"output_schema_bytes,omitempty"`
	// Calls counts the calls that ended; Results sums their results'
	// bytes (compact JSON of each result object).
	Calls   int `json:"calls"`
	Results int `json:"result_bytes"`
}

// Costs returns the cost of each listed tool, in the listing's order, then
// of each tool that was called but not listed.
func Costs(s *Shown) []ToolCost {
	var out []ToolCost
	index := map[string]int{}
	for _, it := range s.Tools {
		index[it.Key] = len(out)
		out = append(out, DefCost(it.Key, it.Def))
	}
	for _, g := range s.Groups {
		i, ok := index[g.Tool]
		if !ok {
			i = len(out)
			index[g.Tool] = i
			out = append(out, ToolCost{Name: g.Tool})
		}
		out[i].Calls += g.Calls()
		out[i].Results += g.ResultBytes
	}
	return out
}

// DefCost measures one tool definition (no calls).
func DefCost(name string, def json.RawMessage) ToolCost {
	c := ToolCost{Name: name, Def: len(surface.Compact(def))}
	var t struct {
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(def, &t) == nil {
		c.Description = len(t.Description)
		c.InputSchema = len(surface.Compact(t.InputSchema))
		c.OutputSchema = len(surface.Compact(t.OutputSchema))
	}
	return c
}

// TotalCost sums costs (Name "total").
func TotalCost(costs []ToolCost) ToolCost {
	t := ToolCost{Name: "total"}
	for _, c := range costs {
		t.Def += c.Def
		t.Description += c.Description
		t.InputSchema += c.InputSchema
		t.OutputSchema += c.OutputSchema
		t.Calls += c.Calls
		t.Results += c.Results
	}
	return t
}

// SortByDef orders costs by definition bytes, largest first (name breaks
// ties).
func SortByDef(costs []ToolCost) {
	slices.SortStableFunc(costs, func(a, b ToolCost) int {
		if a.Def != b.Def {
			return b.Def - a.Def
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
}
