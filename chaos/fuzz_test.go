package chaos

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/sonde-mcp/sonde/internal/proctest"
)

// fuzzRules parses the rules of a fuzz input (one a line; those that do
// not parse are left out), their waits cut to a few milliseconds so that
// a fuzz run does not sleep.
func fuzzRules(text string) []*Rule {
	var rules []*Rule
	for _, l := range strings.Split(text, "\n") {
		r, err := Parse(l, len(rules)+1)
		if err != nil || len(rules) == MaxRules {
			continue
		}
		r.MinMS, r.MaxMS = min(r.MinMS, 2), min(r.MaxMS, 2)
		if r.Action == Reorder {
			r.MinMS, r.MaxMS = 1, 1
		}
		rules = append(rules, r)
	}
	return rules
}

// growth is how much longer the rules can make one line: each corrupt
// adds at most a few dozen bytes.
func growth(rules []*Rule) int { return 64 * len(rules) }

var fuzzRuleSeeds = []string{
	"duplicate:to-host,n=3\ncorrupt:how=string-id",
	"drop:to-host,tool=echo,kind=response\nnoise:to-server,text=hello",
	"delay:ms=1-2\nstall:to-host,ms=1\nduplicate:n=2,ms=1",
	"error:to-server,method=tools/call,code=-32001,message=boom",
	"reorder:to-host,window=2\ncorrupt:to-host,how=result-and-error",
	"corrupt:how=truncate\ncorrupt:how=break-json\nduplicate:n=1000\nduplicate:n=1000",
	"close:to-host,id=3\nstderr:text=x",
	"drop:method=nothing/here\ndelay:to-server,tool=nope,ms=5000",
	"drop:p=0.5,every=2,after=1,max=3",
}

const fuzzStream = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"value":"a"}}}` + "\r\n" +
	`{"jsonrpc":"2.0","id":2,"result":{"content":[]}}` + "\n" +
	"not json\n" +
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n" +
	`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`

// FuzzApply: whatever the rules and the line, Engine.Apply never panics;
// a line no rule fired on is passed exactly as it came and nothing else
// happens to it; whatever the rules do (drop, hold, close, answer, add,
// change) comes with a note of a rule that exists; and what one line
// becomes stays within what the limits allow: at most 1 + MaxCopies
// copies and a noise line per rule, each at most a little longer than the
// line, at most MaxDelay of delay and of stall, a note per rule at most.
func FuzzApply(f *testing.F) {
	for i, s := range fuzzRuleSeeds {
		for _, l := range strings.Split(fuzzStream, "\n") {
			f.Add(s, []byte(strings.TrimRight(l, "\r")), i%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, text string, line []byte, toHost bool) {
		rules := fuzzRules(text)
		e := New(rules, 7)
		d := ToServer
		if toHost {
			d = ToHost
		}
		for range 3 { // counting rules (every=, after=, max=) change with each frame
			in := bytes.Clone(line)
			eff := e.Apply(d, in)
			if !bytes.Equal(in, line) {
				t.Fatalf("Apply changed the line it was given: %q", in)
			}
			if !eff.Matched() {
				if len(eff.Lines) != 1 || !bytes.Equal(eff.Lines[0], line) || eff.Back != nil || eff.ToHost != nil || eff.Stderr != nil || eff.Later != nil ||
					eff.Delay != 0 || eff.Stall != 0 || eff.Close != nil || eff.Hold != nil {
					t.Fatalf("no rule fired, yet %+v", eff)
				}
				continue
			}
			if len(eff.Notes) > len(rules) {
				t.Fatalf("%d notes for %d rules", len(eff.Notes), len(rules))
			}
			for _, n := range eff.Notes {
				if n.Rule < 1 || n.Rule > len(rules) || n.Text == "" || len(n.Text) > MaxRuleBytes+8*MaxValueBytes+2*MaxTextBytes+512 {
					t.Fatalf("note %+v", n)
				}
			}
			if max := 1 + MaxCopies + len(rules); len(eff.Lines)+len(eff.Later)+len(eff.ToHost) > max {
				t.Fatalf("%d lines, %d later, %d noise: over %d", len(eff.Lines), len(eff.Later), len(eff.ToHost), max)
			}
			for _, l := range append(append(append([][]byte(nil), eff.Lines...), eff.Later...), eff.ToHost...) {
				if len(l) > max(len(line)+growth(rules), MaxTextBytes) {
					t.Fatalf("a line of %d bytes from one of %d", len(l), len(line))
				}
			}
			if len(eff.Back) > 1 || len(eff.Stderr) > len(rules)*(MaxTextBytes+1) {
				t.Fatalf("%d answers, %d bytes of stderr", len(eff.Back), len(eff.Stderr))
			}
			if eff.Delay > MaxDelay || eff.Stall > MaxDelay || eff.Delay < 0 || eff.Stall < 0 {
				t.Fatalf("delay %v, stall %v", eff.Delay, eff.Stall)
			}
		}
	})
}

// FuzzLineWriter: a stream cut anywhere through a Pipe (both directions)
// never panics; when no rule fired, each output is byte-identical to its
// input (CRLF, a last line without a newline, a line over the cap that
// passes in pieces) and the host's stderr got nothing; whatever the rules
// did, the host's output stays within what the limits allow for the lines
// given, and once ended and closed the pipe leaves nothing running.
func FuzzLineWriter(f *testing.F) {
	for i, s := range fuzzRuleSeeds {
		f.Add(s, []byte(fuzzStream), []byte(fuzzStream), uint64(i))
	}
	f.Add("drop:id=99", []byte(strings.Repeat("x", 300)+"\n{}\n"), []byte("\n\n\r\n"), uint64(1))
	f.Fuzz(func(t *testing.T, text string, toHost, toServer []byte, seed uint64) {
		if len(toHost)+len(toServer) > 8<<10 {
			return
		}
		rules := fuzzRules(text)
		var mu sync.Mutex
		var notes []Note
		var server, host, errw proctest.Buffer
		p := New(rules, seed).NewPipe(&server, &host, &errw, 256, Hooks{Note: func(n Note) {
			mu.Lock()
			notes = append(notes, n)
			mu.Unlock()
		}})
		rng := rand.New(rand.NewPCG(seed, 1))
		var wg sync.WaitGroup
		for _, s := range []struct {
			w  *LineWriter
			in []byte
		}{{p.ToHost, toHost}, {p.ToServer, toServer}} {
			chunks := split(s.in, rng)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, c := range chunks {
					if n, err := s.w.Write(c); n != len(c) || err != nil {
						t.Errorf("Write: %d of %d, %v", n, len(c), err)
					}
				}
				s.w.End()
			}()
		}
		wg.Wait()
		p.Close() // copies still to be sent later are let go: nothing is written after it
		mu.Lock()
		fired := len(notes)
		mu.Unlock()
		if fired == 0 {
			if host.String() != string(toHost) || server.String() != string(toServer) || errw.String() != "" {
				t.Fatalf("no rule fired, yet host %q (sent %q), server %q (sent %q), stderr %q", host.String(), toHost, server.String(), toServer, errw.String())
			}
			return
		}
		lines := bytes.Count(toHost, []byte("\n")) + bytes.Count(toServer, []byte("\n")) + 2
		longest := max(len(toHost), len(toServer)) + growth(rules) + 1
		if limit := lines * ((1+MaxCopies)*longest + len(rules)*(MaxTextBytes+1)); len(host.String()) > limit {
			t.Fatalf("the host got %d bytes from %d lines, over %d", len(host.String()), lines, limit)
		}
	})
}

// split cuts b into chunks of random sizes.
func split(b []byte, r *rand.Rand) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(len(b), 1+r.IntN(64))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}
