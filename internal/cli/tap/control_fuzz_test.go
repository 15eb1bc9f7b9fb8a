package tap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// lineConn is a net.Conn over bytes: reads come from r, writes go to w.
// It lets FuzzControlLines run serveInjectConn, which takes a
// connection, thousands of times a second.
type lineConn struct {
	r  io.Reader
	mu sync.Mutex
	w  bytes.Buffer
}

func (c *lineConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *lineConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}
func (c *lineConn) Close() error                     { return nil }
func (c *lineConn) LocalAddr() net.Addr              { return &net.UnixAddr{Net: "unix"} }
func (c *lineConn) RemoteAddr() net.Addr             { return &net.UnixAddr{Net: "unix"} }
func (c *lineConn) SetDeadline(time.Time) error      { return nil }
func (c *lineConn) SetReadDeadline(time.Time) error  { return nil }
func (c *lineConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzControlLines sends any lines through a session's socket to a tap
// with fault rules (the control methods sonde faults sends; every other
// request is refused, as into a tap that takes no injected requests).
// Nothing panics; each line gets one answer, a JSON-RPC response line,
// with the request's id when it is a request; what sonde/faults/set
// answers is the rules' state, and a rule is turned on or off only by a
// set that named it.
func FuzzControlLines(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"sonde/faults/list"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"sonde/faults/set","params":{"rule":2,"enabled":false}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"sonde/faults/set","params":{"rule":9,"enabled":true}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"sonde/faults/set","params":{"rule":1}}` + "\r\n\n" + `not json` + "\n" + `{"id":4,"method":"tools/call"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"sonde/faults/set","params":{"rule":1,"enabled":false}}` + "\n" + `[1,2]` + "\n" + `{"jsonrpc":"2.0","id":5,"result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":6,"method":"sonde/faults/set","params":"x"}` + "\n" + `{"jsonrpc":"2.0","id":null,"method":"sonde/faults/list"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"sonde/breaks/watch"}` + "\n" + `{"jsonrpc":"2.0","id":8,"method":"sonde/breaks/add","params":{"expr":"dir:in tool:search"}}` + "\n" + `{"jsonrpc":"2.0","id":9,"method":"sonde/breaks/set","params":{"n":1,"enabled":false}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":10,"method":"sonde/breaks/edit","params":{"handle":"h1","frame":{"jsonrpc":"2.0","id":1,"result":{}}}}` + "\n" + `{"jsonrpc":"2.0","id":11,"method":"sonde/breaks/release","params":{"all":true}}` + "\n" + `{"jsonrpc":"2.0","id":12,"method":"sonde/breaks/answer","params":{"handle":"h2","error":{"code":1,"message":"m"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":13,"method":"sonde/breaks/rm","params":{"n":"x"}}` + "\n" + `{"jsonrpc":"2.0","id":14,"method":"sonde/breaks/nope"}` + "\n" + `{"jsonrpc":"2.0","id":15,"method":"sonde/breaks/add","params":{"expr":"tool:"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var rules []*chaos.Rule
		for i, text := range []string{"drop:to-server,tool=echo,p=0.5", "noise:to-host"} {
			r, err := chaos.Parse(text, i+1)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, r)
		}
		engine := chaos.New(rules, 1)
		c := &lineConn{r: bytes.NewReader(data)}
		breaks := hold.New(hold.Options{Timeout: hold.Forever})
		defer breaks.Close()
		serveInjectConn(context.Background(), &control{faults: engine, breaks: breaks}, c)
		if n := len(breaks.Breakpoints()); n > hold.MaxBreakpoints {
			t.Fatalf("%d breakpoints", n)
		}

		// Each line the socket read has its answer.
		var want []string
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxInjectLine)
		for sc.Scan() {
			want = append(want, sc.Text())
		}
		got := strings.SplitAfter(c.w.String(), "\n")
		if got[len(got)-1] == "" {
			got = got[:len(got)-1]
		}
		if len(got) != len(want) {
			t.Fatalf("%d answers to %d lines: %q", len(got), len(want), got)
		}
		ids := map[string]int{}
		named := map[int]bool{} // rules a set named
		for _, l := range want {
			msg, err := jsonrpc.Decode([]byte(l))
			if msg.ID.IsValid() {
				ids[msg.ID.String()]++ // the answer carries any id that reads
			}
			var p struct {
				Rule    int   `json:"rule"`
				Enabled *bool `json:"enabled"`
			}
			if err == nil && msg.Kind == jsonrpc.KindRequest && msg.Method == MethodFaultsSet && json.Unmarshal(msg.Params, &p) == nil && p.Enabled != nil {
				named[p.Rule] = true
			}
		}
		for _, a := range got {
			if !strings.HasSuffix(a, "\n") || strings.Count(a, "\n") != 1 {
				t.Fatalf("an answer is not one line: %q", a)
			}
			msg, err := jsonrpc.Decode([]byte(a))
			if err != nil || msg.Kind != jsonrpc.KindResponse || (msg.Error == nil) == (msg.Result == nil) {
				t.Fatalf("an answer is not a JSON-RPC response: %q (%v)", a, err)
			}
			if msg.ID.IsValid() {
				if ids[msg.ID.String()] == 0 {
					t.Fatalf("an answer to an id no request had: %q", a)
				}
				ids[msg.ID.String()]--
			}
		}
		for _, st := range engine.States() {
			if !st.Enabled && !named[st.Rule.N] {
				t.Fatalf("rule %d turned off by no set that named it", st.Rule.N)
			}
		}
	})
}

// TestInjectConnOversized: a line longer than maxInjectLine ends the
// connection unanswered, and the lines before it are answered.
func TestInjectConnOversized(t *testing.T) {
	data := `{"jsonrpc":"2.0","id":1,"method":"sonde/faults/list"}` + "\n" + strings.Repeat("x", maxInjectLine+1) + "\n" + `{"jsonrpc":"2.0","id":2,"method":"sonde/faults/list"}` + "\n"
	c := &lineConn{r: strings.NewReader(data)}
	serveInjectConn(context.Background(), &control{}, c)
	if got := c.w.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, `"id":1`) {
		t.Fatalf("answers %q, want only id 1's", got)
	}
}
