package mcp

import (
	"bytes"
	"encoding/json"
)

// ResultIsError reports whether a result (a response's "result" member) is
// a tool result with isError set: the call reached the tool, and the tool
// failed. Results that do not mention isError are not decoded.
func ResultIsError(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"isError"`)) {
		return false
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}
