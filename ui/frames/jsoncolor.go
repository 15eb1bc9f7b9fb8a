package frames

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// sk names the style of a span; spans are styled only when drawn, so the
// detail view renders only the lines on screen.
type sk uint8

const (
	skText sk = iota
	skSubtle
	skAccent
	skInfo
	skWarn
	skError
	skHeader
	skVerdict // the style of the detail view's verdict
	skKey
	skString
	skNumber
	skBool
	skNull
	skPunct
	skMatch    // a fuzzy-matched character
	skSelected // the selection itself
	skCount
)

// span is a run of text in one style.
type span struct {
	k sk
	s string
}

type tok uint8

const (
	tPunct tok = iota
	tString
	tNumber
	tBool
	tNull
	tBad
)

// colorJSON pretty-prints b with a two-space indent as lines of styled
// spans. It is a tokenizer, not a parser, and never fails: bytes that are
// not JSON come out in the error style, as they were (escaped).
func colorJSON(b []byte) [][]span {
	var lines [][]span
	var cur []span
	depth := 0
	newline := func() { // a line holding only its indent is dropped
		if len(cur) > 1 || (len(cur) == 1 && cur[0].k != skText) {
			lines = append(lines, cur)
		}
		cur = nil
		if depth > 0 {
			cur = append(cur, span{skText, strings.Repeat("  ", depth)})
		}
	}
	for i := skipWS(b, 0); i < len(b); {
		k, j := nextTok(b, i)
		t := string(b[i:j])
		next := skipWS(b, j)
		switch {
		case k == tPunct && (t == "{" || t == "["):
			cur = append(cur, span{skPunct, t})
			if next < len(b) && (b[next] == '}' || b[next] == ']') {
				cur = append(cur, span{skPunct, string(b[next])})
				next = skipWS(b, next+1)
			} else {
				depth++
				newline()
			}
		case k == tPunct && (t == "}" || t == "]"):
			depth = max(depth-1, 0)
			newline()
			cur = append(cur, span{skPunct, t})
		case k == tPunct && t == ",":
			cur = append(cur, span{skPunct, ","})
			newline()
		case k == tPunct && t == ":":
			cur = append(cur, span{skPunct, ": "})
		case k == tString && next < len(b) && b[next] == ':':
			cur = append(cur, span{skKey, textfmt.Escape(t)})
		case k == tString:
			cur = append(cur, span{skString, textfmt.Escape(t)})
		case k == tNumber:
			cur = append(cur, span{skNumber, t})
		case k == tBool:
			cur = append(cur, span{skBool, t})
		case k == tNull:
			cur = append(cur, span{skNull, t})
		default:
			cur = append(cur, span{skError, textfmt.Escape(t)})
		}
		i = next
	}
	if len(cur) > 0 || len(lines) == 0 {
		lines = append(lines, cur)
	}
	return lines
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// nextTok returns the kind of the token at b[i] (not whitespace) and where
// it ends. It always consumes at least one byte.
func nextTok(b []byte, i int) (tok, int) {
	c := b[i]
	switch {
	case strings.IndexByte("{}[],:", c) >= 0:
		return tPunct, i + 1
	case c == '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return tString, j + 1
			}
		}
		return tBad, len(b)
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && strings.IndexByte("0123456789+-.eE", b[j]) >= 0 {
			j++
		}
		return tNumber, j
	}
	j := i + 1
	for j < len(b) && skipWS(b, j) == j && strings.IndexByte("{}[],:\"", b[j]) < 0 {
		j++
	}
	switch string(b[i:j]) {
	case "true", "false":
		return tBool, j
	case "null":
		return tNull, j
	}
	return tBad, j
}

// wrapSpans cuts a line of spans into lines of at most w cells.
func wrapSpans(line []span, w int) [][]span {
	if w <= 0 {
		return [][]span{line}
	}
	var out [][]span
	var cur []span
	cw := 0
	for _, sp := range line {
		for s := sp.s; s != ""; {
			if cw == w {
				out, cur, cw = append(out, cur), nil, 0
			}
			n, used := fitPrefix(s, w-cw)
			if n == 0 && cw > 0 { // a wide rune that does not fit: next line
				out, cur, cw = append(out, cur), nil, 0
				continue
			}
			if n == 0 { // wider than the whole line: take it anyway
				_, n = utf8.DecodeRuneInString(s)
				used = w
			}
			cur = append(cur, span{sp.k, s[:n]})
			cw += used
			s = s[n:]
		}
	}
	return append(out, cur)
}

// fitPrefix returns the length in bytes and the width in cells of the
// longest prefix of s that fits in room cells.
func fitPrefix(s string, room int) (n, used int) {
	for i, r := range s {
		rw := 1
		if r >= 0x80 {
			rw = ansi.StringWidth(string(r))
		}
		if used+rw > room {
			return i, used
		}
		used += rw
	}
	return len(s), used
}
