package chaos

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/proctest"
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

// TestPipeDuplicateLater: duplicate with ms= writes the copies that much
// later, while the lines after it go on at once.
func TestPipeDuplicateLater(t *testing.T) {
	var server, host, errw proctest.Buffer
	p := engine(t, "duplicate:to-host,id=1,n=2,ms=150").NewPipe(&server, &host, &errw, 1024, Hooks{})
	one, two := `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n", `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n"
	p.ToHost.Write([]byte(one + two))
	if got := host.String(); got != one+two {
		t.Fatalf("at once: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for host.String() != one+two+one+one {
		if time.Now().After(deadline) {
			t.Fatalf("later: %q", host.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDuring: a rule with during= matches only within its window from the
// engine's start.
func TestDuring(t *testing.T) {
	e := engine(t, "drop:during=0s-1h", "noise:during=1h-2h")
	eff := e.Apply(ToHost, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if eff.Lines != nil || len(eff.Notes) != 1 {
		t.Fatalf("%+v", eff)
	}
	if _, err := Parse("drop:during=5s", 1); err == nil {
		t.Fatal("during=5s parsed")
	}
}
