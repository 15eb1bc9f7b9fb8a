package tap

import (
	"bytes"
	"slices"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
)

// FuzzHoldWriter feeds any bytes, cut anywhere, through one direction of
// the breakpoints' path with a breakpoint on requests, then releases
// what it holds: every byte comes out, the lines not held in their order
// and byte for byte, the held ones whole on their lines; with no
// breakpoint enabled, the output is the input. Empty lines are not
// counted (a line cut by a newline added is not told from one).
func FuzzHoldWriter(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\r\n"+"not json\n"), uint8(7), true)
	f.Add([]byte("a\nb\n\n{\"id\":2,\"method\":\"x\",\"jsonrpc\":\"2.0\"}\nend"), uint8(1), false)
	f.Fuzz(func(t *testing.T, data []byte, cut uint8, armed bool) {
		e := hold.New(hold.Options{Timeout: hold.Forever})
		defer e.Close()
		if armed {
			if _, err := e.Add("kind:request"); err != nil {
				t.Fatal(err)
			}
		}
		var out, back bytes.Buffer
		w := &holdWriter{e: e, dir: client.Out, dst: newHoldOut(&out, nil, streamIn), back: newHoldOut(&back, nil, streamOut), max: 64}
		step := int(cut)%16 + 1
		for i := 0; i < len(data); i += step {
			if _, err := w.Write(data[i:min(i+step, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.End(); err != nil {
			t.Fatal(err)
		}
		if !armed {
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("unarmed: %q, want %q", out.Bytes(), data)
			}
			return
		}
		if err := e.ReleaseAll(client.HoldBySocket); err != nil {
			t.Fatal(err)
		}
		if back.Len() != 0 {
			t.Fatalf("a release went back: %q", back.Bytes())
		}
		// Every byte is out; as lines (held ones went later, on lines of
		// their own: after a last line without its newline, one is
		// added), the same.
		lines := func(b []byte) [][]byte {
			var l [][]byte
			for _, x := range bytes.SplitAfter(b, []byte("\n")) {
				if x = bytes.TrimSuffix(x, []byte("\n")); len(x) > 0 {
					l = append(l, x)
				}
			}
			slices.SortFunc(l, bytes.Compare)
			return l
		}
		if got, want := lines(out.Bytes()), lines(data); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("out %q, in %q", out.Bytes(), data)
		}
	})
}
