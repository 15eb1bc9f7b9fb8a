package tap

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// fuzzPending are the injected ids awaited in FuzzHostFilter.
var fuzzPending = []string{`"sonde-7-1"`, `"sonde-7-2"`}

// FuzzHostFilter writes any server output, cut into any chunks, through
// the host filter while two injected requests wait. The host gets the
// output with whole lines taken out and nothing else changed: every line
// taken is the first answer to an awaited id, each id's at most once, and
// every other byte reaches the host in order; the first answer to an
// awaited id that is a line of at most max bytes is always taken (one
// longer is passed on, as documented, when it comes in pieces).
func FuzzHostFilter(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"+`{"jsonrpc":"2.0","id":"sonde-7-1","result":{}}`+"\n"), []byte{3, 40, 1}, uint16(64))
	f.Add([]byte(`{"id":"sonde-7-2","error":{"code":1}}`+"\r\n"+`{"id":"sonde-7-2","result":1}`+"\n"+`{"id":"sonde-7-1","method":"x"}`+"\n"+`half`), []byte{0, 0, 9}, uint16(16))
	f.Add([]byte(`{"a":"{\"id\":\"sonde-7-1\"}"}`+"\n"+`{"id":"sonde-7-1","id":2,"result":0}`+"\n"+`{"id":2,"id":"sonde-7-1","result":0}`+"\n"), []byte{255}, uint16(1))
	f.Add(bytes.Repeat([]byte(`{"id":"sonde-7-1","result":"`+string(bytes.Repeat([]byte("x"), 100))+`"}`+"\n"), 3), []byte{10, 10, 10, 10, 200}, uint16(50))
	f.Add([]byte("\n\n\x00\xff\n"), []byte{}, uint16(4096))
	f.Fuzz(func(t *testing.T, data, cuts []byte, max uint16) {
		maxLine := int(max%4096) + 1
		in := NewInjector()
		answers := map[string]chan []byte{}
		for _, id := range fuzzPending {
			c := make(chan []byte, 1)
			in.pending[id], answers[id] = c, c
			in.count.Add(1)
		}
		var out bytes.Buffer
		hf := &hostFilter{in: in, w: &out, max: maxLine}
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if len(cuts) > 0 {
				n = min(int(cuts[i%len(cuts)])+1, len(rest))
			}
			if w, err := hf.Write(rest[:n]); err != nil || w != n {
				t.Fatalf("Write: %d, %v", w, err)
			}
			rest = rest[n:]
		}
		hf.flush()

		// What was taken, by id.
		taken := map[string][]byte{}
		for id, c := range answers {
			select {
			case a := <-c:
				taken[id] = a
			default:
			}
		}
		// The host's bytes are the server's with the taken lines cut out.
		got := out.Bytes()
		done := map[string]bool{} // awaited ids whose answer has been seen
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			key := ""
			if l[len(l)-1] == '\n' {
				if id, method := jsonrpc.ScanID(l); !method && id.IsValid() && (id.String() == fuzzPending[0] || id.String() == fuzzPending[1]) && !done[id.String()] {
					key = id.String()
				}
			}
			short := len(l)-1 <= maxLine
			isTaken := key != "" && bytes.Equal(taken[key], bytes.TrimRight(l, "\r\n"))
			switch {
			case key != "" && short && !isTaken:
				t.Fatalf("the first answer to %s (%d bytes, max %d) was not taken: %q (taken %q)", key, len(l), maxLine, l, taken[key])
			case isTaken && (short || !bytes.HasPrefix(got, l)):
				done[key] = true // taken out
			case bytes.HasPrefix(got, l):
				got = got[len(l):]
			default:
				t.Fatalf("the host's bytes differ at line %q; left %q", l, got)
			}
		}
		left := map[string]bool{}
		for id := range taken {
			if !done[id] {
				left[id] = true
			}
		}
		if len(got) > 0 || len(left) > 0 {
			t.Fatalf("the host got %q more; taken but not in the output: %v", got, left)
		}
	})
}

// FuzzParseInjected: any bytes given to inject are refused, or are a
// request whose line to the server is one JSON line (no newline of its
// own inside) with the tap's id and the same members otherwise; an answer
// under the tap's id comes back with the caller's id.
func FuzzParseInjected(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"mine","method":"ping"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":` + "\n\t" + `[1, 2]}}`))
	f.Add([]byte(`{"id":null,"method":null}`))
	f.Add([]byte(`{"id":1,"id":2,"method":"x","method":"y"}`))
	f.Add([]byte(`{"method":"notifications/x"}`))
	f.Add([]byte(`[{"id":1,"method":"x"}]`))
	f.Add([]byte("{\"id\":\"\\u2028\",\"method\":\"\\n\"}"))
	f.Fuzz(func(t *testing.T, req []byte) {
		msg, own, err := parseInjected(req)
		if err != nil {
			if msg != nil || own != nil {
				t.Fatal("a refusal with a message")
			}
			return
		}
		if msg["method"] == nil || own == nil {
			t.Fatalf("accepted without method or id: %q", req)
		}
		members := len(msg)
		line := injectedLine(msg, json.RawMessage(`"sonde-1-1"`))
		if bytes.IndexByte(line, '\n') != len(line)-1 {
			t.Fatalf("the line to the server is not one line: %q", line)
		}
		var back map[string]json.RawMessage
		if err := json.Unmarshal(line, &back); err != nil || len(back) != members {
			t.Fatalf("the line %q does not decode to its %d members: %v", line, members, err)
		}
		if id, method := jsonrpc.ScanID(line); !method || id.String() != `"sonde-1-1"` {
			t.Fatalf("the line %q: id %v, method %v", line, id, method)
		}
		a := withID([]byte(`{"jsonrpc":"2.0","id":"sonde-1-1","result":{}}`), own)
		var am map[string]json.RawMessage
		if err := json.Unmarshal(a, &am); err != nil {
			t.Fatalf("answer %q: %v", a, err)
		}
		var want, gotID bytes.Buffer
		json.Compact(&want, own)
		json.Compact(&gotID, am["id"])
		if want.String() != gotID.String() {
			t.Fatalf("answer id %s, want the caller's %s", am["id"], own)
		}
		if string(am[WireIDMember]) != `"sonde-1-1"` {
			t.Fatalf("answer %s: %s is %s, want the wire's id", a, WireIDMember, am[WireIDMember])
		}
	})
}
