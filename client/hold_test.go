package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// outStates lists the states of sonde's request id, in order.
func outStates(evs []Event, id string) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == EvRequest && ev.Req.Dir == transport.Out && ev.Req.ID.String() == id {
			out = append(out, string(ev.Req.State))
		}
	}
	return out
}

// holdTimeout is the deadline of the calls of the hold tests, given per
// call: the handshake keeps the default one (a 400 ms Options.Timeout timed
// the initialize out on a loaded machine). It is long enough for the
// fixture's elicitation to come in well before it.
const holdTimeout = 2 * time.Second

// TestHoldDeadlines: while the fixture's confirm waits for the user's
// answer to its elicitation and the UI holds the deadlines (its dialog is
// open), sonde's tools/call (and a call started meanwhile) do not time
// out; once answered, the clock runs again.
func TestHoldDeadlines(t *testing.T) {
	const timeout = holdTimeout
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true}}, fixtureArgs{})
	s.init()
	s.c.HoldDeadlines(true) // nothing waits yet: nothing is held
	ctx := context.Background()
	confirm := s.c.GoTool(ctx, "confirm", nil, CallOptions{Timeout: timeout})
	r := waitingFor(t, s, mcp.MethodElicit)
	s.waitFor("the call held", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.ID == confirm.ID && ev.Req.State == StateHeld
	})
	// Started while held: it answers a second after its deadline would
	// have been, so once it has, confirm has been held past its own too.
	slow := s.c.GoTool(ctx, "echo", json.RawMessage(`{"value":"late","delay_ms":3000}`), CallOptions{Timeout: timeout})
	if _, err := slow.Wait(); err != nil {
		t.Fatalf("the call started while held: %v", err)
	}
	select {
	case <-confirm.Done():
		t.Fatalf("confirm settled while held: %v", confirm.err)
	default:
	}
	if err := s.c.Respond(r.ID, json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), nil); err != nil {
		t.Fatal(err)
	}
	raw, err := confirm.Wait()
	if err != nil || !strings.Contains(string(raw), `"confirmed"`) {
		t.Fatalf("confirm: %s %v", raw, err)
	}
	s.waitFor("confirm's resolved event", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.ID == confirm.ID && ev.Req.State == StateResolved
	})
	evs := s.snapshot()
	if got := strings.Join(outStates(evs, confirm.ID.String()), ","); got != "queued,sent,held,sent,resolved" {
		t.Fatalf("confirm's states %s", got)
	}
	if got := strings.Join(outStates(evs, slow.ID.String()), ","); got != "queued,held,held,resolved" {
		t.Fatalf("echo's states %s", got)
	}
	var notes []string
	for _, ev := range evs {
		if ev.Kind == EvNote && strings.Contains(ev.Note, "deadline") {
			notes = append(notes, ev.Note)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "held while you answer a request of the server's") || !strings.Contains(notes[1], "run again after") {
		t.Fatalf("notes %q", notes)
	}
	// The clock runs again: a call that outlives its timeout now times out.
	hang := s.c.GoTool(ctx, "echo", json.RawMessage(`{"value":"x","delay_ms":6000}`), CallOptions{Timeout: timeout})
	if _, err := hang.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("after the answer: %v", err)
	}
}

// TestNoHoldByDefault: without HoldDeadlines the call that made the
// server ask times out as any other.
func TestNoHoldByDefault(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true}}, fixtureArgs{})
	s.init()
	confirm := s.c.GoTool(context.Background(), "confirm", nil, CallOptions{Timeout: holdTimeout})
	waitingFor(t, s, mcp.MethodElicit)
	if _, err := confirm.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("confirm: %v", err)
	}
	for _, st := range outStates(s.snapshot(), confirm.ID.String()) {
		if st == string(StateHeld) {
			t.Fatal("held without HoldDeadlines")
		}
	}
}

// TestHoldKeepsProgressHeld: progress for a held request is shown with it
// held (no deadline), and with ResetOnProgress it refills the time left.
func TestHoldKeepsProgressHeld(t *testing.T) {
	s := start(t, Options{ResetOnProgress: true, ServerRequests: ServerRequests{Elicitation: true}}, fixtureArgs{})
	s.init()
	ctx := context.Background()
	confirm := s.c.GoTool(ctx, "confirm", nil, CallOptions{Timeout: holdTimeout})
	r := waitingFor(t, s, mcp.MethodElicit)
	s.c.HoldDeadlines(true)
	prog := s.c.GoTool(ctx, "progress", json.RawMessage(`{"steps":3,"interval_ms":250}`), CallOptions{ProgressToken: true, Timeout: holdTimeout})
	if _, err := prog.Wait(); err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, ev := range s.snapshot() {
		if ev.Kind == EvRequest && ev.Req.ID == prog.ID && ev.Req.Progress != nil {
			if ev.Req.State != StateHeld || !ev.Req.Deadline.IsZero() {
				t.Fatalf("progress while held: %+v", ev.Req)
			}
			held++
		}
	}
	if held == 0 {
		t.Fatal("no progress event")
	}
	if err := s.c.Respond(r.ID, json.RawMessage(`{"action":"decline"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := confirm.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestHoldEndsWhenPutOff: the hold ends when the UI stops it (the user put
// the question off), though the request still waits: the call then times
// out as usual.
func TestHoldEndsWhenPutOff(t *testing.T) {
	s := start(t, Options{ServerRequests: ServerRequests{Elicitation: true}}, fixtureArgs{})
	s.init()
	confirm := s.c.GoTool(context.Background(), "confirm", nil, CallOptions{Timeout: holdTimeout})
	waitingFor(t, s, mcp.MethodElicit)
	s.c.HoldDeadlines(true)
	s.waitFor("the call held", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.ID == confirm.ID && ev.Req.State == StateHeld
	})
	time.Sleep(holdTimeout + time.Second) // past the deadline it had
	select {
	case <-confirm.Done():
		t.Fatal("settled while held")
	default:
	}
	s.c.HoldDeadlines(false)
	if _, err := confirm.Wait(); !errors.Is(err, ErrTimeout) {
		t.Fatalf("after the hold: %v", err)
	}
	if len(s.c.Waiting()) != 1 {
		t.Fatal("the question left with the hold")
	}
}
