package chaos

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func mustRules(t *testing.T, texts ...string) []*Rule {
	t.Helper()
	var rs []*Rule
	for i, s := range texts {
		r, err := Parse(s, i+1)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

const (
	callEcho   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	answerEcho = `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`
)

// TestApplyMatchesResponsesByTheirRequest: method= and tool= match a
// response through the request it answers (tracked per direction).
func TestApplyMatchesResponsesByTheirRequest(t *testing.T) {
	e := New(mustRules(t, "drop:to-host,tool=echo,kind=response"), 1)
	if eff := e.Apply(ToServer, []byte(callEcho)); eff.Matched() || len(eff.Lines) != 1 || string(eff.Lines[0]) != callEcho {
		t.Fatalf("request: %+v", eff)
	}
	eff := e.Apply(ToHost, []byte(answerEcho))
	if !eff.Matched() || eff.Lines != nil || !strings.Contains(eff.Notes[0].Text, "fault rule 1 (drop:to-host,tool=echo,kind=response) dropped the response to id 7 (tools/call echo) to-host") {
		t.Fatalf("response: %+v", eff)
	}
	// Answered once: a second answer to 7 no longer has a tool.
	if eff := e.Apply(ToHost, []byte(answerEcho)); eff.Matched() {
		t.Fatalf("second response: %+v", eff)
	}
}

func TestApplyActions(t *testing.T) {
	for _, tc := range []struct {
		rule, dir, line string
		want            func(Effect) bool
	}{
		{"delay:ms=250", "host", answerEcho, func(e Effect) bool { return e.Delay == 250*time.Millisecond && len(e.Lines) == 1 }},
		{"duplicate:n=2", "host", answerEcho, func(e Effect) bool { return len(e.Lines) == 3 }},
		{"corrupt:how=string-id", "host", answerEcho, func(e Effect) bool {
			return string(e.Lines[0]) == `{"jsonrpc":"2.0","id":"7","result":{"content":[]}}`
		}},
		{"corrupt:how=truncate", "host", answerEcho, func(e Effect) bool { return len(e.Lines[0]) == len(answerEcho)/2 }},
		{"corrupt:how=break-json", "host", answerEcho + "\r", func(e Effect) bool {
			return string(e.Lines[0]) == answerEcho[:len(answerEcho)-1]+",}\r" && !json.Valid(e.Lines[0])
		}},
		{"corrupt:how=result-and-error", "host", answerEcho, func(e Effect) bool {
			return strings.Contains(string(e.Lines[0]), `"result"`) && strings.Contains(string(e.Lines[0]), `"error"`) && json.Valid(e.Lines[0])
		}},
		{"error:to-server,code=-32000,message=boom", "server", callEcho, func(e Effect) bool {
			return e.Lines == nil && len(e.Back) == 1 && string(e.Back[0]) == `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"boom"}}`
		}},
		{"noise:text=hello", "host", answerEcho, func(e Effect) bool { return len(e.Lines) == 2 && string(e.Lines[0]) == "hello" }},
		{"noise:text=hello", "server", callEcho, func(e Effect) bool { return len(e.Lines) == 1 && string(e.ToHost[0]) == "hello" }},
		{"stderr:text=hi", "host", answerEcho, func(e Effect) bool { return string(e.Stderr) == "hi\n" }},
	} {
		e := New(mustRules(t, tc.rule), 1)
		d := ToHost
		if tc.dir == "server" {
			d = ToServer
		}
		eff := e.Apply(d, []byte(tc.line))
		if !eff.Matched() || !tc.want(eff) {
			t.Errorf("%s: %+v (lines %q)", tc.rule, eff, eff.Lines)
		}
	}
}

// TestApplyCounting: every=, after=, max=, and p= with a seed.
func TestApplyCounting(t *testing.T) {
	e := New(mustRules(t, "drop:after=1,every=2"), 1)
	var fired []int
	for i := 1; i <= 7; i++ {
		if e.Apply(ToHost, []byte(answerEcho)).Matched() {
			fired = append(fired, i)
		}
	}
	if len(fired) != 3 || fired[0] != 3 || fired[1] != 5 || fired[2] != 7 {
		t.Fatalf("after=1,every=2 fired at %v", fired)
	}
	e = New(mustRules(t, "drop:every=2,max=2"), 1)
	fired = nil
	for i := 1; i <= 8; i++ {
		if e.Apply(ToHost, []byte(answerEcho)).Matched() {
			fired = append(fired, i)
		}
	}
	if len(fired) != 2 || fired[0] != 2 || fired[1] != 4 {
		t.Fatalf("every=2,max=2 fired at %v", fired)
	}
	draw := func(seed uint64) string {
		e := New(mustRules(t, "drop:p=0.5", "delay:ms=0-1000"), seed)
		var b strings.Builder
		for range 64 {
			eff := e.Apply(ToHost, []byte(answerEcho))
			if eff.Lines == nil {
				b.WriteByte('x')
			} else {
				b.WriteString(eff.Delay.String())
			}
		}
		return b.String()
	}
	if a, b := draw(42), draw(42); a != b {
		t.Fatal("the same seed drew differently")
	}
	if draw(42) == draw(43) {
		t.Fatal("two seeds drew the same 64 times")
	}
	if n := strings.Count(draw(42), "x"); n < 16 || n > 48 {
		t.Fatalf("p=0.5 dropped %d of 64", n)
	}
}

// TestReorder: a reorder rule holds the frames it matches (Effect.Hold);
// Release reverses them, or shuffles them the same way for one seed.
func TestReorder(t *testing.T) {
	e := New(mustRules(t, "reorder:to-host,window=3"), 1)
	eff := e.Apply(ToHost, []byte(answerEcho))
	if eff.Hold == nil || eff.Hold.Window != 3 || eff.Hold.MinMS != 1000 || !strings.Contains(eff.Notes[0].Text, "held the response to id 7") {
		t.Fatalf("%+v", eff)
	}
	held := [][][]byte{{[]byte("1")}, {[]byte("2")}, {[]byte("3")}}
	if got := e.Release(eff.Hold, ToHost, held); string(got[0][0])+string(got[1][0])+string(got[2][0]) != "321" {
		t.Fatalf("reverse: %q", got)
	}
	shuffle := func(seed uint64) string {
		e := New(mustRules(t, "reorder:order=random,window=8"), seed)
		var held [][][]byte
		for i := range 8 {
			held = append(held, [][]byte{{byte('a' + i)}})
		}
		var b strings.Builder
		for _, f := range e.Release(e.Rules()[0], ToHost, held) {
			b.Write(f[0])
		}
		return b.String()
	}
	if a, b, c := shuffle(5), shuffle(5), shuffle(6); a != b || a == c {
		t.Fatalf("shuffles: %s %s %s", a, b, c)
	}
	if _, err := Parse("reorder:ms=100-200", 1); err == nil {
		t.Fatal("reorder with a range of ms parsed")
	}
}

// TestSetEnabled: a rule turned off matches nothing and counts nothing
// until it is turned on again; an unknown number is ErrNoRule.
func TestSetEnabled(t *testing.T) {
	e := New(mustRules(t, "drop:to-host", "delay:to-host,ms=1"), 1)
	if err := e.SetEnabled(1, false); err != nil {
		t.Fatal(err)
	}
	eff := e.Apply(ToHost, []byte(answerEcho))
	if eff.Lines == nil || len(eff.Notes) != 1 || eff.Notes[0].Rule != 2 {
		t.Fatalf("rule 1 off: %+v", eff)
	}
	st := e.States()
	if st[0].Enabled || st[0].Matched != 0 || !st[1].Enabled || st[1].Fired != 1 {
		t.Fatalf("states %+v", st)
	}
	if err := e.SetEnabled(1, true); err != nil {
		t.Fatal(err)
	}
	if eff := e.Apply(ToHost, []byte(answerEcho)); eff.Lines != nil || eff.Notes[0].Rule != 1 {
		t.Fatalf("rule 1 on again: %+v", eff)
	}
	if err := e.SetEnabled(3, false); !errors.Is(err, ErrNoRule) {
		t.Fatalf("rule 3: %v", err)
	}
}
