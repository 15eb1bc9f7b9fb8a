package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// stripJSONC returns b with the JSONC extensions VS Code accepts (// and
// /* */ comments, a comma before } or ]) blanked out with spaces, so the
// offsets of what is left, and so the line numbers of errors, are those of
// the file. Newlines inside block comments are kept.
func stripJSONC(b []byte) []byte {
	out := bytes.Clone(b)
	inString, escaped := false, false
	lastComma := -1 // offset of a comma not yet followed by a value
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString, lastComma = true, -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			end := len(out)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for k := i; k < end; k++ {
				if out[k] != '\n' && out[k] != '\r' {
					out[k] = ' '
				}
			}
			i = end - 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out
}

// decodeObject decodes b (JSONC when jsonc is set) as a JSON object whose
// members are kept raw. A syntax error names its line and column.
func decodeObject(b []byte, jsonc bool) (map[string]json.RawMessage, error) {
	text := b
	if jsonc {
		text = stripJSONC(b)
	}
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // a UTF-8 BOM
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrSyntax)
	}
	var v any
	if err := json.Unmarshal(text, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(text, int(se.Offset))
			return nil, fmt.Errorf("%w: line %d, column %d: %s", ErrSyntax, line, col, se.Error())
		}
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("%w: the top level is %s, want an object", ErrShape, kind(v))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(text, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return m, nil
}

// position returns the 1-based line and column of byte offset off (the
// offset json.SyntaxError reports is just past the bad byte).
func position(b []byte, off int) (line, col int) {
	if off > len(b) {
		off = len(b)
	}
	if off > 0 {
		off--
	}
	line = 1 + bytes.Count(b[:off], []byte("\n"))
	col = off - bytes.LastIndexByte(b[:off], '\n')
	return line, col
}

// kind names the JSON type of a decoded value, for error messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// kindOf names the JSON type of a raw value.
func kindOf(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "invalid JSON"
	}
	return kind(v)
}
