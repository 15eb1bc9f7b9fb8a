package tools

import (
	"encoding/json"
	"fmt"
)

// Marks of a tool in a list that replaced another.
const (
	markNew     = "new"
	markChanged = "changed"
)

// toolDiff is what the last list changed against the one before.
type toolDiff struct {
	added, removed, changed int
	marks                   map[string]string // tool name: markNew or markChanged
}

// diffTools compares a new tool list with the old one: tools added, removed,
// and changed (any field: the input schema, output schema, description,
// annotations…).
func diffTools(old, cur []entry) toolDiff {
	d := toolDiff{marks: map[string]string{}}
	before := map[string]string{}
	for _, e := range old {
		before[e.tool.Name] = toolSig(e.tool)
	}
	for _, e := range cur {
		sig, ok := before[e.tool.Name]
		switch {
		case !ok:
			d.added++
			d.marks[e.tool.Name] = markNew
		case sig != toolSig(e.tool):
			d.changed++
			d.marks[e.tool.Name] = markChanged
		}
		delete(before, e.tool.Name)
	}
	d.removed = len(before)
	return d
}

func toolSig(t any) string {
	b, _ := json.Marshal(t)
	return string(b)
}

// text is " · +A −R ~C" when the last list changed anything.
func (d toolDiff) text() string {
	if d.added+d.removed+d.changed == 0 {
		return ""
	}
	return fmt.Sprintf(" · +%d −%d ~%d", d.added, d.removed, d.changed)
}
