package mcp

import (
	"encoding/json"
	"testing"
)

func TestReadOnly(t *testing.T) {
	for ann, want := range map[string]bool{
		``:                          false,
		`{}`:                        false,
		`{"readOnlyHint":true}`:     true,
		`{"readOnlyHint":false}`:    false,
		`{"readOnlyHint":"yes"}`:    false,
		`{"destructiveHint":false}`: false,
	} {
		if got := (Tool{Annotations: json.RawMessage(ann)}).ReadOnly(); got != want {
			t.Errorf("%s: ReadOnly() = %v, want %v", ann, got, want)
		}
	}
}
