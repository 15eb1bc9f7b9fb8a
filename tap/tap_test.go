package tap

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
)

// TestMain: the test binary re-executed with fixturetest.Env is the
// fixture server.
func TestMain(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`

func fixtureOptions(t *testing.T, args ...string) Options {
	argv, _ := fixturetest.Argv(t, args...)
	return Options{
		Argv: argv,
		Env:  append(os.Environ(), fixturetest.ChildEnv()...),
	}
}

// events runs the tap over in with an observer and returns what the host
// got and the observer's events.
func events(t *testing.T, opts Options, in string) (string, []client.Event, Stats) {
	t.Helper()
	o := client.NewObserver(0)
	sub := o.Subscribe(1 << 16)
	opts.Observer = o
	var out, errb bytes.Buffer
	ended, st, err := Run(opts, strings.NewReader(in), &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != 0 {
		t.Fatalf("server: %+v\n%s", ended, errb.String())
	}
	o.Close()
	var evs []client.Event
	for ev := range sub.C {
		evs = append(evs, ev)
	}
	return out.String(), evs, st
}

// TestObservationNeverSlowsForwarding: with no room at all for
// observation, every byte is still forwarded; what was not observed is
// counted, reported as a note, and left as a gap in Seq (a missed record
// in a capture).
func TestObservationNeverSlowsForwarding(t *testing.T) {
	opts := fixtureOptions(t)
	opts.QueueBytes = 1 // no chunk fits
	in := initLine + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{"bytes":1000000}}}` + "\n"
	out, evs, st := events(t, opts, in)
	if !strings.Contains(out, `"serverInfo"`) || st.Out != int64(len(out)) || len(out) < 1000000 {
		t.Fatalf("forwarded %d bytes (stats %+v)", len(out), st)
	}
	if st.MissedChunks == 0 || st.MissedBytes < int64(len(in)) {
		t.Errorf("missed %+v", st)
	}
	var gap, note bool
	var last uint64
	for _, ev := range evs {
		gap = gap || ev.Seq > last+1
		last = ev.Seq
		note = note || ev.Kind == client.EvNote && strings.Contains(ev.Note, "forwarded but not observed")
		if ev.Kind == client.EvFrame {
			t.Errorf("a frame was observed: %q", ev.Frame.Raw)
		}
	}
	if !gap || !note {
		t.Errorf("gap in Seq %v, note %v", gap, note)
	}
}

// TestObservedSession: the events of a plain session: start, the host's
// request queued and sent, the answer resolved, the exit last.
func TestObservedSession(t *testing.T) {
	out, evs, st := events(t, fixtureOptions(t), initLine+"\n")
	if st.In != int64(len(initLine)+1) || st.Out != int64(len(out)) {
		t.Errorf("stats %+v for %d bytes out", st, len(out))
	}
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case client.EvProcess:
			got = append(got, string(ev.Proc.What))
		case client.EvFrame:
			got = append(got, ev.Frame.Dir.String()+" "+string(ev.Frame.Verdict))
		case client.EvRequest:
			got = append(got, string(ev.Req.State))
		}
	}
	want := "start queued out sent sent in resolved resolved exit"
	if strings.Join(got, " ") != want {
		t.Errorf("events %q, want %q", strings.Join(got, " "), want)
	}
}
