package manager

import (
	"context"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// BenchmarkCall is one echo call through the manager (routing, the call's
// context and its registration, the read-only hint) against the fixture
// as a real subprocess, started once.
func BenchmarkCall(b *testing.B) {
	a, _ := fixtureB(b, "alpha")
	m, err := New([]Spec{a}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Stop(nil)
	ctx := context.Background()
	args := map[string]any{"value": "x"}
	if _, err := m.Call(ctx, "alpha", "echo", args, client.CallOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Call(ctx, "alpha", "echo", args, client.CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientCall is the same call on the client directly: the
// difference is the manager's cost.
func BenchmarkClientCall(b *testing.B) {
	a, _ := fixtureB(b, "alpha")
	m, err := New([]Spec{a}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Stop(nil)
	ctx := context.Background()
	c, err := m.Client(ctx, "alpha")
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"value":"x"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := c.CallTool(ctx, "echo", args, client.CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
