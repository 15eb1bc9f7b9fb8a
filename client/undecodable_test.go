package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
)

// TestUndecodableResponseRules: a line Decode could not read settles the
// pending request whose id its top-level "id" member names, once; a line
// with a "method" (a request of the server's), an id only inside a nested
// value, a string id, and the cut last line of a server that stopped
// settle nothing.
func TestUndecodableResponseRules(t *testing.T) {
	conn := newStuckConn()
	c := New(Options{Timeout: time.Minute})
	if err := c.Connect(func(transport.Observer) (transport.Conn, error) { return conn, nil }); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub := c.Subscribe(1 << 10)
	c.mu.Lock()
	c.initialized = true // no handshake with this fake peer
	c.mu.Unlock()
	one := c.Go(context.Background(), "tools/call", nil, CallOptions{})
	two := c.Go(context.Background(), "tools/call", nil, CallOptions{})
	if n, _ := two.ID.Int64(); n != 2 {
		t.Fatalf("second id %s", two.ID)
	}
	feed := func(line string) {
		c.handleFrame(transport.NewInFrame([]byte(line), time.Now()))
	}
	// The last frame from the server so far (the two requests' sent frames
	// come from the writer's goroutine, whenever it writes them).
	lastFrame := func() *FrameInfo {
		var f *FrameInfo
		for {
			select {
			case ev := <-sub.C:
				if ev.Kind == EvFrame && ev.Frame.Dir == In {
					f = ev.Frame
				}
			default:
				return f
			}
		}
	}

	for _, line := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"x":"` + "\x00" + `"}}`,
		`{"jsonrpc":"2.0","result":{"id":2},"x":"` + "\x00" + `"}`,
		`{"jsonrpc":"2.0","x":"\"id\":2","result":"` + "\x00" + `"}`,
		`{"jsonrpc":"2.0","id":"2","result":"` + "\x00" + `"}`,
		`{"jsonrpc":"2.0","id":3,"result":"` + "\x00" + `"}`,
	} {
		feed(line)
		if f := lastFrame(); f == nil || f.Verdict != VerdictMalformed || strings.Contains(f.Detail, "settles") {
			t.Fatalf("%q: frame %+v", line, f)
		}
	}
	incomplete := transport.NewInFrame([]byte(`{"jsonrpc":"2.0","id":2,"res`), time.Now())
	incomplete.Err = &jsonrpc.DecodeError{Class: jsonrpc.ClassNotJSON, Reason: transport.IncompleteLineReason}
	c.handleFrame(incomplete)
	if c.Pending() != 2 {
		t.Fatalf("%d pending, want 2: a line settled a request it does not answer", c.Pending())
	}

	// An object Decode cannot unmarshal (jsonrpc is a number): invalid.
	feed(`{"jsonrpc":2,"id":1,"result":{}}`)
	_, err := one.Wait()
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "tools/call id 1: the response to id 1 could not be decoded: json: cannot unmarshal number") {
		t.Fatalf("id 1: %v", err)
	}
	if f := lastFrame(); f == nil || f.Verdict != VerdictInvalid || !strings.HasSuffix(f.Detail, "; settles id 1 with MCP_PROTOCOL") {
		t.Fatalf("frame %+v", f)
	}
	// Nesting deeper than the decoder allows: not JSON to it.
	feed(`{"jsonrpc":"2.0","id":2,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`)
	if _, err := two.Wait(); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "the response to id 2 could not be decoded") {
		t.Fatalf("id 2: %v", err)
	}
	// The real response after it is a duplicate, and settles nothing.
	feed(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if f := lastFrame(); f == nil || f.Verdict != VerdictDuplicate {
		t.Fatalf("frame %+v", f)
	}
	if st := c.Stats(); st.Pending != 0 || st.Failed != 2 || st.Duplicate != 1 || st.Invalid != 1 {
		t.Fatalf("stats %+v", st)
	}
}
