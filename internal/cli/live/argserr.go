package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// argsError says why text is not a JSON object for --args: where a syntax
// error is (line and column) with the line and a caret under the place,
// or what the value is instead of an object.
func argsError(text string, err error) string {
	const want = `--args must be a JSON object, e.g. '{"value":"hi"}'`
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case strings.TrimSpace(text) == "":
		return "--args is empty: " + want
	case errors.As(err, &se):
		off := int(se.Offset)
		if strings.Contains(se.Error(), "unexpected end") {
			off = len(text) + 1 // cut short: the caret goes after the end
		}
		line, col, src, caret := locate(text, off)
		return fmt.Sprintf("--args is not valid JSON: %s (line %d, column %d)\n  %s\n  %s^", se.Error(), line, col, src, strings.Repeat(" ", caret))
	case errors.As(err, &te):
		return fmt.Sprintf("--args is a JSON %s, not an object: %s", te.Value, want)
	case err == nil:
		return "--args is null: " + want
	}
	return want
}

// locate finds byte offset off (json.SyntaxError.Offset: just after the
// bad byte) in text: its 1-based line and column (in characters), the line
// shown (escaped, at most about 60 characters around the place) and the
// caret's column in it.
func locate(text string, off int) (line, col int, src string, caret int) {
	at := max(min(off-1, len(text)), 0) // the byte the error is about
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := strings.IndexByte(text[at:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += at
	}
	line = strings.Count(text[:at], "\n") + 1
	col = utf8.RuneCountInString(text[start:at]) + 1
	from, to := start, end
	if at-from > 40 {
		from = at - 40
		for from < at && !utf8.RuneStart(text[from]) {
			from++
		}
	}
	if to-at > 40 {
		to = at + 40
		for to > at && to < len(text) && !utf8.RuneStart(text[to]) {
			to--
		}
	}
	before := textfmt.Escape(text[from:at])
	src = before + textfmt.Escape(text[at:to])
	if from > start {
		src, before = "…"+src, "…"+before
	}
	if to < end {
		src += "…"
	}
	return line, col, src, utf8.RuneCountInString(before)
}
