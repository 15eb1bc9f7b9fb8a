package tools

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// annotationLine says a content block's annotations in one line:
// "audience user, assistant · priority 0.8 · lastModified 2025-01-12T15:00:58Z".
// Each field is read on its own, so a malformed one is shown as such
// without hiding the others; "" when there are none.
func annotationLine(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return "annotations (not an object)"
	}
	var parts []string
	if a, ok := fields["audience"]; ok {
		var who []string
		if json.Unmarshal(a, &who) == nil {
			for i := range who {
				who[i] = textfmt.Clean(who[i])
			}
			parts = append(parts, "audience "+strings.Join(who, ", "))
		} else {
			parts = append(parts, "audience (not a list of strings)")
		}
	}
	if p, ok := fields["priority"]; ok {
		var f float64
		if json.Unmarshal(p, &f) == nil {
			s := "priority " + strconv.FormatFloat(f, 'g', 4, 64)
			if f < 0 || f > 1 {
				s += " (outside 0–1)"
			}
			parts = append(parts, s)
		} else {
			parts = append(parts, "priority (not a number)")
		}
	}
	if l, ok := fields["lastModified"]; ok {
		var s string
		if json.Unmarshal(l, &s) == nil {
			parts = append(parts, "lastModified "+textfmt.Clean(s))
		} else {
			parts = append(parts, "lastModified (not a string)")
		}
	}
	return strings.Join(parts, " · ")
}
