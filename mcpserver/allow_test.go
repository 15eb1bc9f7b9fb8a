package mcpserver

import (
	"errors"
	"slices"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "./my-server", want: []string{"./my-server"}},
		{in: "  npx -y   @modelcontextprotocol/server-everything ", want: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
		{in: `sh -c 'echo $HOME; rm -rf /'`, want: []string{"sh", "-c", "echo $HOME; rm -rf /"}},
		{in: `a "b c" d\ e`, want: []string{"a", "b c", "d e"}},
		{in: `"a\"b\\c\$d\x"`, want: []string{`a"b\c$d\x`}},
		{in: `''`, want: []string{""}},
		{in: `a''b`, want: []string{"ab"}},
		{in: "a\\\nb", want: []string{"ab"}},
		{in: "$(whoami) `id` *", want: []string{"$(whoami)", "`id`", "*"}},
		{in: "", want: nil},
		{in: `'open`, bad: true},
		{in: `"open`, bad: true},
		{in: `end\`, bad: true},
	} {
		got, err := SplitWords(c.in)
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q (error: %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestAllowList(t *testing.T) {
	a, err := parseAllowList([]string{"./my-server --flag", "npx -y '@scope/pkg'"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"./my-server", "--flag"}, true},
		{[]string{"npx", "-y", "@scope/pkg"}, true},
		{[]string{"./my-server"}, false},
		{[]string{"./my-server", "--flag", "--more"}, false},
		{[]string{"./my-server --flag"}, false}, // one word is not two
		{[]string{"npx", "-y", "@scope/other"}, false},
	} {
		if got := a.allows(c.argv); got != c.want {
			t.Errorf("allows(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
	for _, bad := range []string{"", "   ", "'unclosed"} {
		if _, err := parseAllowList([]string{bad}); !errors.Is(err, ErrBadAllow) {
			t.Errorf("--allow %q: %v, want ErrBadAllow", bad, err)
		}
	}
}

// FuzzSplitWords: splitting never panics, and QuoteWords of the words
// splits back into the same words (what a refusal tells the user to pass
// to --allow is what is then allowed).
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"./my-server --flag", `a "b c" 'd e' f\ g`, "x\\\ny", `"\$\"\\"`, "'", "a\tb\nc", "é 'ü'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitWords(s)
		if err != nil {
			return
		}
		back, err := SplitWords(QuoteWords(words))
		if err != nil || !slices.Equal(back, words) && !(len(words) == 0 && len(back) == 0) {
			t.Fatalf("%q: words %q, quoted %q, back %q (%v)", s, words, QuoteWords(words), back, err)
		}
	})
}
