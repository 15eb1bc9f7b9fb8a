package client

import (
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

func TestInjected(t *testing.T) {
	for _, c := range []struct {
		id   jsonrpc.ID
		want bool
	}{
		{jsonrpc.String("sonde-4242-1"), true},
		{jsonrpc.String("sonde-1-999999"), true},
		{jsonrpc.String("sonde-inject-3"), true},
		{jsonrpc.String("sonde-injected-3"), false},
		{jsonrpc.String("sonde-4242-"), false},
		{jsonrpc.String("sonde--1"), false},
		{jsonrpc.String("sonde-a-1"), false},
		{jsonrpc.String("x-sonde-1-1"), false},
		{jsonrpc.String("sonde-1-1-1"), false},
		{jsonrpc.Int(1), false},
		{jsonrpc.ID{}, false},
	} {
		if got := Injected(c.id); got != c.want {
			t.Errorf("Injected(%s) = %v, want %v", c.id, got, c.want)
		}
	}
}
