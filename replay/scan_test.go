package replay

import (
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestRequestFields: the byte search reads what a full decode reads, also
// when the error's data holds keys named like the record's, and for other
// layouts (which are decoded in full).
func TestRequestFields(t *testing.T) {
	cases := []struct {
		name string
		line string
		want reqFields
	}{
		{"sent", `{"type":"request","seq":4,"t":1,"dir":"out","id":1,"method":"initialize","state":"sent","deadline":5}`,
			reqFields{id: []byte("1"), method: "initialize", state: client.StateSent}},
		{"string id, server's request", `{"type":"request","seq":4,"t":1,"dir":"in","id":"a\"b","method":"ping","state":"received"}`,
			reqFields{in: true, id: []byte(`"a\"b"`), method: "ping", state: client.StateReceived}},
		{"progress", `{"type":"request","seq":9,"t":1,"dir":"out","id":7,"method":"tools/call","tool":"p","state":"progress","latency":3,"progress":{"progress":1,"message":"x"}}`,
			reqFields{id: []byte("7"), method: "tools/call", state: client.StateProgress, progress: true}},
		{"rejected, error data with look-alike keys", `{"type":"request","seq":9,"t":1,"dir":"out","method":"tools/call","state":"rejected","error":{"code":"MCP_ERROR","message":"m","rpc":{"code":1,"message":"x","data":{"id":5,"state":"sent","progress":{}}}}}`,
			reqFields{method: "tools/call", state: client.StateRejected}},
		{"other layout", `{"t":1,"state":"timeout","type":"request","id":3,"dir":"out","method":"tools/call","seq":2}`,
			reqFields{id: []byte("3"), method: "tools/call", state: client.StateTimeout}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := requestFields([]byte(tc.line))
			if !ok || got.in != tc.want.in || string(got.id) != string(tc.want.id) || got.method != tc.want.method ||
				got.state != tc.want.state || got.progress != tc.want.progress {
				t.Fatalf("got %+v (id %s) %v, want %+v (id %s)", got, got.id, ok, tc.want, tc.want.id)
			}
		})
	}
}
