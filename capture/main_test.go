package capture

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/transport"
)

func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// live is a client connected to the fixture (a real subprocess), with a
// recorder writing to path and a collector keeping every event the client
// emitted, for comparison.
type live struct {
	c    *client.Client
	cfg  client.StdioConfig
	rec  *Recorder
	path string
	argv []string

	mu     sync.Mutex
	events []client.Event
	done   chan struct{}
}

type liveOpts struct {
	faults  []string // fixture arguments
	env     []string // --env entries for the server
	redact  []string // --redact patterns
	timeout time.Duration
	out     io.Writer // instead of a file
	buffer  int       // the recorder's buffer
	maxLine int       // --max-line-bytes (default 8 MiB)
}

// startLive starts the fixture with a recorder following the client. The
// caller ends the session with finish.
func startLive(t *testing.T, o liveOpts) *live {
	t.Helper()
	argv, _ := fixturetest.Argv(t, o.faults...)
	env, err := transport.BuildEnv(os.Environ(), nil, append(fixturetest.ChildEnv(), o.env...))
	if err != nil {
		t.Fatal(err)
	}
	red, err := NewRedactor(o.env, o.redact)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.jsonl")
	out := o.out
	if out == nil {
		f, err := Create(path, false)
		if err != nil {
			t.Fatal(err)
		}
		out = f
	}
	rec, err := NewRecorder(out, Options{Sonde: "test", Command: argv, Redact: red, Buffer: o.buffer})
	if err != nil {
		t.Fatal(err)
	}
	timeout := o.timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	l := &live{c: client.New(client.Options{Timeout: timeout, MaxLineBytes: o.maxLine}), rec: rec, path: path, argv: argv, done: make(chan struct{})}
	sub := l.c.Subscribe(1 << 20)
	rec.Follow(l.c)
	go func() {
		defer close(l.done)
		for ev := range sub.C {
			l.mu.Lock()
			l.events = append(l.events, ev)
			l.mu.Unlock()
		}
	}()
	cfg := client.StdioConfig{Argv: argv, Env: env, KillAfter: 300 * time.Millisecond, MaxLineBytes: o.maxLine}
	l.cfg = cfg
	if err := l.c.Connect(client.Stdio(cfg)); err != nil {
		l.c.Close()
		rec.Close()
		<-l.done
		t.Fatal(err)
	}
	t.Cleanup(func() { l.finish() })
	return l
}

// finish closes the client and the recorder and returns the events the
// client emitted and the recorder's summary.
func (l *live) finish() ([]client.Event, Summary) {
	l.c.Close()
	sum := l.rec.Close()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events, sum
}
