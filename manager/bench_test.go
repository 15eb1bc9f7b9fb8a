package manager

import (
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// benchServer is a manager of one fixture (a real subprocess), started,
// and its client; the manager stops with the benchmark.
func benchServer(b *testing.B) (*Manager, *client.Client) {
	a, _ := fixtureB(b, "alpha")
	m, err := New([]Spec{a}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Stop(nil) })
	if _, err := m.ListTools(b.Context(), "alpha"); err != nil {
		b.Fatal(err)
	}
	c, err := m.Client(b.Context(), "alpha")
	if err != nil {
		b.Fatal(err)
	}
	return m, c
}

// BenchmarkCall is one echo call through the manager (routing, the call's
// context and its registration, the read-only hint) against the fixture.
func BenchmarkCall(b *testing.B) {
	m, _ := benchServer(b)
	args := map[string]any{"value": "x"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Call(b.Context(), "alpha", "echo", args, client.CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClientCall is the same call on the client directly: the
// difference is the manager's cost.
func BenchmarkClientCall(b *testing.B) {
	_, c := benchServer(b)
	args := []byte(`{"value":"x"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.CallTool(b.Context(), "echo", args, client.CallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
