package chaos

import (
	"errors"
	"strings"
	"testing"
)

// TestParseExamples: the examples parse to what they say.
func TestParseExamples(t *testing.T) {
	for _, tc := range []struct {
		text  string
		check func(*Rule) bool
	}{
		{"delay:to-host,method=tools/call,ms=3000", func(r *Rule) bool {
			return r.Action == Delay && r.Dir == ToHost && r.Method == "tools/call" && r.MinMS == 3000 && r.MaxMS == 3000
		}},
		{"delay:to-host,ms=100-500", func(r *Rule) bool { return r.MinMS == 100 && r.MaxMS == 500 }},
		{"duplicate:to-host,kind=response,every=5", func(r *Rule) bool {
			return r.Action == Duplicate && r.Kind == "response" && r.Every == 5 && r.Times == 1
		}},
		{"duplicate:to-host,response,n=3", func(r *Rule) bool { return r.Kind == "response" && r.Times == 3 }},
		{"drop:to-host,method=notifications/progress,p=0.5", func(r *Rule) bool { return r.Action == Drop && r.P == 0.5 && r.pSet }},
		{"corrupt:to-host,tool=search,how=string-id", func(r *Rule) bool { return r.How == HowStringID && r.Tool == "search" }},
		{"error:to-server,tool=delete,code=-32603,message=boom", func(r *Rule) bool { return r.Code == -32603 && r.Message == "boom" && r.Kind == "request" }},
		{"noise:to-host", func(r *Rule) bool { return r.Action == Noise && r.Text2 != "" }},
		{"stderr:to-server,method=initialize,text=hello there", func(r *Rule) bool { return r.Text2 == "hello there" }},
		{"drop", func(r *Rule) bool { return r.Dir == Both }},
		{"drop:id=7,after=2", func(r *Rule) bool { return r.ID == "7" && r.After == 2 }},
		{"drop:to-host,tool=echo,max=1", func(r *Rule) bool { return r.Tool == "echo" && r.Max == 1 }},
	} {
		r, err := Parse(tc.text, 1)
		if err != nil {
			t.Errorf("%s: %v", tc.text, err)
			continue
		}
		if !tc.check(r) {
			t.Errorf("%s: %+v", tc.text, r)
		}
	}
}

// TestParseErrors: a bad rule says where (1-based character) and what.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		pos  int
		msg  string
	}{
		{"explode:to-host", 1, "unknown action"},
		{"delay:to-host", 14, "delay needs ms="},
		{"delay:to-host,ms=abc", 18, `ms="abc"`},
		{"delay:to-host,ms=500-100", 18, "range"},
		{"drop:to-hots", 6, `unknown item "to-hots"`},
		{"drop:to-host,,kind=request", 14, "empty item"},
		{"drop:to-host,p=2", 16, "probability"},
		{"drop:to-host,max=0", 18, `max="0": want an integer ≥ 1`},
		{"drop:to-host,every=0", 20, "every="},
		{"drop:to-host,colour=red", 14, `unknown option "colour"`},
		{"drop:to-host,ms=5", 18, "ms= does not apply to drop"},
		{"corrupt:to-host", 16, "how="},
		{"corrupt:to-host,how=melt", 21, "how="},
		{"error:to-server,kind=response", 30, "error answers requests"},
		{"drop:to-host,to-server", 14, "second direction"},
		{"drop:method=a,method=b", 15, "method given twice"},
		{"noise:text={}", 14, "must not look like JSON"},
	} {
		_, err := Parse(tc.text, 1)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a ParseError", tc.text, err)
			continue
		}
		if pe.Pos != tc.pos || !strings.Contains(pe.Msg, tc.msg) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v (at %d), want at %d: %s", tc.text, err, pe.Pos, tc.pos, tc.msg)
		}
	}
}

// TestParseFile: comments and blank lines skipped, rules numbered from
// first, an error names the file's line.
func TestParseFile(t *testing.T) {
	rules, err := ParseFile(strings.NewReader("# the answers\n\ndrop:to-host,id=3\n  # more\nnoise:to-host\n"), "f", 2)
	if err != nil || len(rules) != 2 || rules[0].N != 2 || rules[1].N != 3 {
		t.Fatalf("%v %+v", err, rules)
	}
	if _, err := ParseFile(strings.NewReader("drop\nboom\n"), "f", 1); err == nil || !strings.Contains(err.Error(), "f:2:") {
		t.Fatalf("%v", err)
	}
}

// FuzzParse: Parse never panics; what it accepts has a known action, and
// an error's position lies within the rule (or just past it).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"delay:to-host,method=tools/call,ms=3000", "drop:to-host,p=0.5", "corrupt:how=string-id", "error:to-server,code=1,message=x", "a:b=c,,=", "delay:ms=1-", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s, 1)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Pos < 1 || pe.Pos > len(s)+1 {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if !actions[r.Action] {
			t.Fatalf("%q: action %q", s, r.Action)
		}
		e := New([]*Rule{r}, 1)
		e.Apply(ToHost, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		e.Apply(ToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	})
}
