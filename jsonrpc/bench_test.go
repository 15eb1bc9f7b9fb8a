package jsonrpc

import "testing"

func BenchmarkDecode(b *testing.B) {
	lines := map[string][]byte{
		"response": []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"value":"hello world"}}}`),
		"request":  []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"value":"x"},"_meta":{"progressToken":7}}}`),
		"noise":    []byte(`Server listening on stdio, logging at debug level`),
	}
	for name, line := range lines {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				_, _ = Decode(line)
			}
		})
	}
}
