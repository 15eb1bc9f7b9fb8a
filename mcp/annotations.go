package mcp

import "encoding/json"

// ToolAnnotations are the hints of a tool's annotations object. They are
// the server's claims, never trusted for safety; sonde reads them only to
// word what it shows (a call of a tool that is not read-only, cancelled or
// timed out, may have done its work).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ReadOnly reports whether the tool's annotations say readOnlyHint: true.
// Absent annotations, an absent hint, or annotations that do not decode
// mean false, as the spec's default is: the tool may have side effects.
func (t Tool) ReadOnly() bool {
	if len(t.Annotations) == 0 {
		return false
	}
	var a ToolAnnotations
	if json.Unmarshal(t.Annotations, &a) != nil || a.ReadOnlyHint == nil {
		return false
	}
	return *a.ReadOnlyHint
}
