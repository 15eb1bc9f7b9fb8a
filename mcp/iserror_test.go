package mcp

import "testing"

func TestResultIsError(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      bool
	}{
		{"set", `{"content":[],"isError":true}`, true},
		{"false", `{"content":[],"isError":false}`, false},
		{"absent", `{"content":[{"type":"text","text":"isError"}]}`, false},
		{"nested only", `{"content":[{"type":"text","text":"x"}],"structuredContent":{"isError":true}}`, false},
		{"not an object", `[1]`, false},
		{"empty", ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResultIsError([]byte(tc.raw)); got != tc.want {
				t.Fatalf("ResultIsError(%s) = %v, want %v", tc.raw, got, tc.want)
			}
		})
	}
}
