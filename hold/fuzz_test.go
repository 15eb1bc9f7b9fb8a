package hold

import (
	"encoding/json"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// FuzzControl: whatever a socket sends as a control call, the Engine
// answers (State or a JSON-RPC error), never panics, and keeps its bounds.
func FuzzControl(f *testing.F) {
	for _, s := range []string{`{"expr":"tool:search"}`, `{"handles":["h1","h2"]}`, `{"handle":"h1","frame":{"jsonrpc":"2.0","id":1,"result":{}}}`,
		`{"handle":"h1","result":[1]}`, `{"handle":"h1","error":{"code":1,"message":"x"}}`, `{"all":true}`, `null`, `[`} {
		f.Add(MethodAdd, s)
		f.Add(MethodEdit, s)
	}
	methods := []string{MethodList, MethodAdd, MethodRemove, MethodEnable, MethodRelease, MethodDrop, MethodEdit, MethodAnswer}
	f.Fuzz(func(t *testing.T, method, params string) {
		e := New(Options{Timeout: Forever})
		defer e.Close()
		_, _ = e.Add("kind:request")
		e.Offer(client.Out, []byte(callSearch), func(Outcome) error { return nil })
		_, _ = e.Control(client.HoldBySocket, method, json.RawMessage(params))
		for _, m := range methods {
			_, _ = e.Control(client.HoldBySocket, m, json.RawMessage(params))
		}
		if len(e.List()) > 1 || len(e.Breakpoints()) > MaxBreakpoints {
			t.Fatal("bounds")
		}
	})
}
