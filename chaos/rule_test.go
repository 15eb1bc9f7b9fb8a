package chaos

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
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
			return r.Action == Duplicate && r.Kind == jsonrpc.KindResponse && r.Every == 5 && r.Times == 1
		}},
		{"duplicate:to-host,response,n=3", func(r *Rule) bool { return r.Kind == jsonrpc.KindResponse && r.Times == 3 }},
		{"drop:to-host,method=notifications/progress,p=0.5", func(r *Rule) bool { return r.Action == Drop && r.P == 0.5 && r.pSet }},
		{"corrupt:to-host,tool=search,how=string-id", func(r *Rule) bool { return r.How == HowStringID && r.Tool == "search" }},
		{"error:to-server,tool=delete,code=-32603,message=boom", func(r *Rule) bool { return r.Code == -32603 && r.Message == "boom" && r.Kind == jsonrpc.KindRequest }},
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

// TestParseLimits: every numeric value of every action is bounded when the
// rule is parsed (docs/chaos.md, "Limits"): one past the limit is a
// *ParseError matching ErrLimit that names the rule, the value and the
// limit, at the value's position; the limit itself parses. Before the
// limits, duplicate:n=1000000000 was taken, and the tap built 2.8 GB.
func TestParseLimits(t *testing.T) {
	long := strings.Repeat("x", MaxValueBytes+1)
	text := strings.Repeat("t", MaxTextBytes+1)
	for _, tc := range []struct {
		ok, over string // the limit, and one past it
		pos      int    // where over goes wrong
		limit    string
	}{
		{"duplicate:n=1000", "duplicate:n=1001", 13, "1000 copies"},
		{"duplicate:n=1000", "duplicate:n=1000000000", 13, "1000 copies"},
		{"duplicate:n=1000", "duplicate:n=99999999999999999999999", 13, "1000 copies"},
		{"duplicate:ms=3600000", "duplicate:ms=3600001", 14, "3600000"},
		{"delay:ms=3600000", "delay:ms=3600001", 10, "3600000"},
		{"delay:ms=1-3600000", "delay:ms=1-3600001", 10, "3600000"},
		{"delay:ms=1-3600000", "delay:ms=1-99999999999999999999", 10, "3600000"},
		{"stall:ms=3600000", "stall:ms=3600001", 10, "3600000"},
		{"reorder:ms=3600000", "reorder:ms=3600001", 12, "3600000"},
		{"reorder:window=1000", "reorder:window=1001", 16, "1000 frames"},
		{"drop:every=1000000000", "drop:every=1000000001", 12, "1000000000"},
		{"drop:after=1000000000", "drop:after=1000000001", 12, "1000000000"},
		{"drop:max=1000000000", "drop:max=1000000001", 10, "1000000000"},
		{"drop:during=1s-8784h", "drop:during=1s-8785h", 13, "8784h"},
		{"error:code=9007199254740991", "error:code=9007199254740992", 12, "2^53-1"},
		{"error:code=-9007199254740991", "error:code=-9007199254740992", 12, "2^53-1"},
		{"error:code=1", "error:code=99999999999999999999", 12, "2^53-1"},
		{"drop:method=" + long[1:], "drop:method=" + long, 13, "256 bytes"},
		{"drop:tool=" + long[1:], "drop:tool=" + long, 11, "256 bytes"},
		{"drop:id=" + long[1:], "drop:id=" + long, 9, "256 bytes"},
		{"noise:text=" + text[1:], "noise:text=" + text, 12, "1024 bytes"},
		{"stderr:text=" + text[1:], "stderr:text=" + text, 13, "1024 bytes"},
		{"error:message=" + text[1:], "error:message=" + text, 15, "1024 bytes"},
		{"drop:" + strings.Repeat(" ", MaxRuleBytes-13) + "method=x", "drop:" + strings.Repeat(" ", MaxRuleBytes-12) + "method=x", MaxRuleBytes + 1, "4096"},
	} {
		if _, err := Parse(tc.ok, 1); err != nil {
			t.Errorf("%.40s: %v, want it taken", tc.ok, err)
		}
		_, err := Parse(tc.over, 1)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrLimit) {
			t.Errorf("%.40s: %v, want a ParseError over the limit", tc.over, err)
			continue
		}
		if pe.Pos != tc.pos || !strings.Contains(pe.Msg, "over the limit of") || !strings.Contains(pe.Msg, tc.limit) || !strings.Contains(err.Error(), tc.over[:min(len(tc.over), 40)]) {
			t.Errorf("%.40s: %v (at %d), want at %d the limit %s", tc.over, err, pe.Pos, tc.pos, tc.limit)
		}
		if len(err.Error()) > len(pe.Rule)+2*MaxValueBytes+200 || len(pe.Rule) > MaxRuleBytes+4 {
			t.Errorf("%.40s: an error of %d bytes", tc.over, len(err.Error()))
		}
	}
	// A malformed value is not over a limit.
	if _, err := Parse("duplicate:n=lots", 1); err == nil || errors.Is(err, ErrLimit) {
		t.Errorf("n=lots: %v", err)
	}
	// The number of rules: 256 taken, the 257th refused (flags and file
	// together), with the file's line.
	texts := make([]string, MaxRules)
	for i := range texts {
		texts[i] = "drop:id=" + fmt.Sprint(i)
	}
	if e, err := Load(texts, "", 1, true); err != nil || len(e.Rules()) != MaxRules {
		t.Fatalf("%d rules: %v", MaxRules, err)
	}
	if _, err := Load(append(texts, "drop"), "", 1, true); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "rule 257: over the limit of 256 rules") {
		t.Errorf("257 rules: %v", err)
	}
	file := filepath.Join(t.TempDir(), "rules")
	os.WriteFile(file, []byte("# more\ndrop\n"), 0o600)
	if _, err := Load(texts, file, 1, true); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), file+":2:") {
		t.Errorf("257 rules with a file: %v", err)
	}
}
