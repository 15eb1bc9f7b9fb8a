package tools

import "github.com/sonde-mcp/sonde/mcp"

// Tool returns the listed tool called name.
func (m *Model) Tool(name string) (mcp.Tool, bool) {
	for _, e := range m.tools {
		if e.tool.Name == name {
			return e.tool, true
		}
	}
	return mcp.Tool{}, false
}
