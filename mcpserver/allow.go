package mcpserver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadAllow is the error of an --allow entry that does not split into
// words (an unclosed quote, a trailing backslash, nothing at all).
var ErrBadAllow = errors.New("bad --allow entry")

// allowList is the command lines --allow permits: each entry split into
// words once, at start, and compared word for word.
type allowList struct {
	entries [][]string
}

func parseAllowList(entries []string) (*allowList, error) {
	a := &allowList{}
	for _, e := range entries {
		words, err := SplitWords(e)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadAllow, e, err)
		}
		if len(words) == 0 {
			return nil, fmt.Errorf("%w %q: no command", ErrBadAllow, e)
		}
		a.entries = append(a.entries, words)
	}
	return a, nil
}

// allows reports whether argv is, word for word, one of the entries.
func (a *allowList) allows(argv []string) bool {
	for _, e := range a.entries {
		if slices.Equal(e, argv) {
			return true
		}
	}
	return false
}

// SplitWords splits s into words as a POSIX shell splits a command line's
// words, without running anything: blanks separate words; single quotes
// keep everything up to the next single quote; double quotes keep
// everything up to the next unescaped double quote, a backslash escaping
// only $ ` " \ and a newline there; a backslash outside quotes escapes the
// next character. No expansion of any kind ($VAR, globs, ~) happens.
func SplitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unclosed single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			i, in = i+1+end, true
		case c == '"':
			n, err := doubleQuoted(s[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i, in = i+n, true // the closing quote
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("trailing backslash")
			}
			if s[i+1] != '\n' { // backslash-newline joins lines
				cur.WriteByte(s[i+1])
				in = true
			}
			i++
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// doubleQuoted writes the inside of a double-quoted string (s starts after
// the opening quote) to cur and returns how many bytes it used, the
// closing quote included.
func doubleQuoted(s string, cur *strings.Builder) (int, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
				if s[i+1] != '\n' {
					cur.WriteByte(s[i+1])
				}
				i++
				continue
			}
			cur.WriteByte(c)
		default:
			cur.WriteByte(c)
		}
	}
	return 0, errors.New("unclosed double quote")
}
