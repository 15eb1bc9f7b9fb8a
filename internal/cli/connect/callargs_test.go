package connect

import (
	"reflect"
	"testing"
)

func TestCallArgs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		t      Target
		config string
		want   []string
	}{
		{"command", Target{Argv: []string{"npx", "-y", "srv"}}, "", []string{"--", "npx", "-y", "srv"}},
		{"url auto", Target{URL: "http://h/mcp", Mode: "auto"}, "", []string{"--url", "http://h/mcp"}},
		{"url sse", Target{URL: "http://h/sse", Mode: "sse"}, "", []string{"--url", "http://h/sse", "--transport", "sse"}},
		{"config entry", Target{Server: "fs", Argv: []string{"npx", "secret"}}, "", []string{"--server", "fs"}},
		{"config file", Target{Server: "fs", URL: "http://h/mcp"}, "my.json", []string{"--config", "my.json", "--server", "fs"}},
		{"nothing", Target{}, "", nil},
	} {
		if got := tc.t.CallArgs(tc.config); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
