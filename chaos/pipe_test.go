package chaos

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func engine(t *testing.T, rules ...string) *Engine {
	t.Helper()
	return New(mustRules(t, rules...), 1)
}

// feed writes stream to w in chunks of random sizes (lines cut anywhere),
// then ends it.
func feed(t *testing.T, w *LineWriter, stream string, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0))
	for b := []byte(stream); len(b) > 0; {
		n := min(len(b), 1+r.IntN(40))
		if _, err := w.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
}

// TestPipeLines: whatever the chunks, a line no rule matches keeps
// its bytes (CRLF, a line over the cap, a last line without a newline),
// and the rules see whole lines.
func TestPipeLines(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":9,"result":{"text":"` + strings.Repeat("x", 300) + `"}}`
	stream := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n" +
		"not json at all\n" +
		`{"jsonrpc":"2.0","id":2,"result":{"a":1}}` + "\n" +
		long + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{}}` // no newline
	for seed := range uint64(50) {
		var server, host, errw bytes.Buffer
		p := engine(t, "drop:to-host,id=404", "duplicate:to-host,id=2").NewPipe(&server, &host, &errw, 128, Hooks{})
		feed(t, p.ToHost, stream, seed)
		want := strings.Replace(stream, `{"jsonrpc":"2.0","id":2,"result":{"a":1}}`+"\n", strings.Repeat(`{"jsonrpc":"2.0","id":2,"result":{"a":1}}`+"\n", 2), 1)
		if host.String() != want {
			t.Fatalf("seed %d:\n%q\nwant\n%q", seed, host.String(), want)
		}
	}
}

// TestPipeAnswersBetweenLines: an error answer to the host waits
// while a line over the cap is passing to it, and goes after it, never
// inside it.
func TestPipeAnswersBetweenLines(t *testing.T) {
	var server, host, errw bytes.Buffer
	p := engine(t, "error:to-server,method=ping").NewPipe(&server, &host, &errw, 16, Hooks{})
	toServer, th := p.ToServer, p.ToHost
	if _, err := th.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"long":"`)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		toServer.Write([]byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}` + "\n"))
	}()
	th.Write([]byte(`yes"}}` + "\n"))
	<-done
	want := `{"jsonrpc":"2.0","id":1,"result":{"long":"yes"}}` + "\n" + `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"sonde chaos"}}` + "\n"
	if host.String() != want || server.Len() != 0 {
		t.Fatalf("host %q, server %q", host.String(), server.String())
	}
}
