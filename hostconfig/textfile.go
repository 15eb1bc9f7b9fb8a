package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"
	yaml "go.yaml.in/yaml/v3"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// Bounds of the TOML and YAML files sonde reads: a host's config is a few
// kilobytes; a larger or deeper one is refused with a problem, not read.
const (
	maxTextFile  = 4 << 20
	maxTextDepth = 64
	maxYAMLNodes = 200_000
)

// textSyntaxError is a TOML or YAML file that cannot be read: it is an
// ErrSyntax that names its syntax ("not valid TOML: …").
type textSyntaxError struct{ syntax, msg string }

func (e *textSyntaxError) Error() string { return "not valid " + e.syntax + ": " + e.msg }

// Unwrap returns ErrSyntax.
func (e *textSyntaxError) Unwrap() error { return ErrSyntax }

func syntaxName(k textKind) string {
	if k == textTOML {
		return "TOML"
	}
	return "YAML"
}

// checkText refuses a TOML or YAML file that is too large, not UTF-8, or
// nested deeper than maxTextDepth brackets.
func checkText(b []byte, k textKind) error {
	bad := func(format string, a ...any) error {
		return &textSyntaxError{syntaxName(k), fmt.Sprintf(format, a...)}
	}
	if len(b) > maxTextFile {
		return bad("the file has %d bytes, more than the %d sonde reads", len(b), maxTextFile)
	}
	if !utf8.Valid(b) {
		i := 0
		for i < len(b) {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		line, col := position(b, i+1)
		return bad("line %d, column %d: not UTF-8", line, col)
	}
	if d := bracketDepth(b); d > maxTextDepth {
		return bad("nested %d deep, more than the %d sonde reads", d, maxTextDepth)
	}
	return nil
}

// bracketDepth is the deepest nesting of [ and { in b outside quoted
// strings and # comments (a bound, not a parse: TOML and YAML flow
// collections nest with them).
func bracketDepth(b []byte) int {
	depth, most := 0, 0
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote || c == '\n' {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '[' || c == '{':
			depth++
			most = max(most, depth)
		case c == ']' || c == '}':
			depth = max(0, depth-1)
		}
	}
	return most
}

// parseText reads a TOML or YAML host config file: its values are turned
// into JSON, in file order, and read as a JSON file's are.
func parseText(b []byte, file, host string, scope paths.Scope, f format) ([]Server, []Problem) {
	top, err := decodeText(b, f)
	if err != nil {
		return nil, []Problem{{File: file, Err: err}}
	}
	base := Server{Host: host, Scope: scope.String(), File: file, dialect: f.dialect}
	var servers []Server
	var problems []Problem
	for _, key := range f.keys {
		if raw, ok := top[key]; ok {
			s, p := parseServers(raw, key, base, f)
			servers, problems = append(servers, s...), append(problems, p...)
		}
	}
	return servers, problems
}

// decodeText decodes a TOML or YAML file into its top-level members as
// JSON, objects keeping their file order.
func decodeText(b []byte, f format) (map[string]json.RawMessage, error) {
	if err := checkText(b, f.text); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrSyntax)
	}
	if f.text == textTOML {
		return decodeTOML(b, f.keys)
	}
	return decodeYAML(b)
}

// decodeTOML reads b with go-toml; the members of the server tables are
// put in the order their names first appear in the file.
func decodeTOML(b []byte, keys []string) (map[string]json.RawMessage, error) {
	var v map[string]any
	if err := toml.Unmarshal(b, &v); err != nil {
		var de *toml.DecodeError
		if asDecodeError(err, &de) {
			line, col := de.Position()
			return nil, &textSyntaxError{"TOML", fmt.Sprintf("line %d, column %d: %s", line, col, de.Error())}
		}
		return nil, &textSyntaxError{"TOML", err.Error()}
	}
	order := tomlServerOrder(b, keys)
	out := map[string]json.RawMessage{}
	for k, val := range v {
		m, isTable := val.(map[string]any)
		if !isTable || !contains(keys, k) {
			raw, err := json.Marshal(val)
			if err != nil {
				return nil, fmt.Errorf("%w: %q: %v", ErrShape, k, err)
			}
			out[k] = raw
			continue
		}
		raw, err := orderedObject(m, order[k])
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrShape, k, err)
		}
		out[k] = raw
	}
	return out, nil
}

func asDecodeError(err error, target **toml.DecodeError) bool {
	de, ok := err.(*toml.DecodeError)
	if ok {
		*target = de
	}
	return ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// orderedObject is m as a JSON object whose members come in the order of
// names (then any others, sorted).
func orderedObject(m map[string]any, names []string) (json.RawMessage, error) {
	var keys []string
	seen := map[string]bool{}
	for _, n := range names {
		if _, ok := m[n]; ok && !seen[n] {
			seen[n] = true
			keys = append(keys, n)
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range append(keys, rest...) {
		if i > 0 {
			buf.WriteByte(',')
		}
		v, err := json.Marshal(m[k])
		if err != nil {
			return nil, err
		}
		buf.WriteString(jsonString(k))
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// decodeYAML reads b with go-yaml into nodes and writes them as JSON,
// mappings in file order. Aliases are followed; at most maxYAMLNodes
// nodes are written (an alias bomb stops there).
func decodeYAML(b []byte) (map[string]json.RawMessage, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &textSyntaxError{"YAML", err.Error()}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%w: the file is empty", ErrSyntax)
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: the top level is not a mapping", ErrShape)
	}
	budget := maxYAMLNodes
	out := map[string]json.RawMessage{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		var buf bytes.Buffer
		if err := yamlJSON(&buf, root.Content[i+1], 0, &budget); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrShape, root.Content[i].Value, err)
		}
		out[root.Content[i].Value] = buf.Bytes()
	}
	return out, nil
}

// yamlJSON writes the YAML node n as JSON.
func yamlJSON(buf *bytes.Buffer, n *yaml.Node, depth int, budget *int) error {
	*budget--
	if *budget < 0 {
		return fmt.Errorf("more than %d values (aliases expanded)", maxYAMLNodes)
	}
	if depth > maxTextDepth {
		return fmt.Errorf("nested more than %d deep", maxTextDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return fmt.Errorf("line %d: an alias to nothing", n.Line)
		}
		return yamlJSON(buf, n.Alias, depth+1, budget)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a key that is not a scalar", k.Line)
			}
			buf.WriteString(jsonString(k.Value))
			buf.WriteByte(':')
			if err := yamlJSON(buf, n.Content[i+1], depth+1, budget); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := yamlJSON(buf, c, depth+1, budget); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %v", n.Line, err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			raw = []byte(jsonString(n.Value)) // a timestamp, a binary: as written
		}
		buf.Write(raw)
	default:
		return fmt.Errorf("line %d: an empty document", n.Line)
	}
	return nil
}
