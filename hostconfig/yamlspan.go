package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// yamlText locates YAML nodes of one file by byte offset.
type yamlText struct {
	b     []byte
	lines []int // the offset of each line's start
}

func newYAMLText(b []byte) *yamlText {
	t := &yamlText{b: b, lines: []int{0}}
	for i, c := range b {
		if c == '\n' {
			t.lines = append(t.lines, i+1)
		}
	}
	return t
}

// offset is the byte offset of a node's line and column (both from 1;
// the column counts characters).
func (t *yamlText) offset(line, col int) int {
	if line < 1 || line > len(t.lines) {
		return -1
	}
	at := t.lines[line-1]
	for c := 1; c < col && at < len(t.b) && t.b[at] != '\n'; c++ {
		_, n := utf8.DecodeRune(t.b[at:])
		at += n
	}
	return at
}

// scalar is the span of the scalar node n as written: a plain, single-
// or double-quoted scalar on its line (flow: inside a flow collection,
// where ",", "]" and "}" end a plain one). Another is a span with no
// place (kind 'v', start -1), which no edit touches.
func (t *yamlText) scalar(n *yaml.Node, flow bool) *span {
	none := &span{start: -1, end: -1, kind: 'v'}
	start := t.offset(n.Line, n.Column)
	if n.Kind != yaml.ScalarNode || start < 0 || start >= len(t.b) {
		return none
	}
	b, i := t.b, start
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i++; i < len(b) && b[i] != '"'; i++ {
			if b[i] == '\\' {
				i++
			}
		}
		i++
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i++; i < len(b); i++ {
			if b[i] == '\'' {
				if i+1 < len(b) && b[i+1] == '\'' {
					i++
					continue
				}
				break
			}
		}
		i++
	case n.Style == 0 || n.Style == yaml.TaggedStyle:
		for i < len(b) && b[i] != '\n' && b[i] != '\r' && !(b[i] == '#' && i > start && (b[i-1] == ' ' || b[i-1] == '\t')) &&
			!(flow && (b[i] == ',' || b[i] == ']' || b[i] == '}')) {
			i++
		}
		for i > start && (b[i-1] == ' ' || b[i-1] == '\t') {
			i--
		}
	default:
		return none
	}
	if i > len(b) {
		return none
	}
	if v, ok := yamlString(b[start:i]); !ok || v != n.Value {
		return none
	}
	return &span{start: start, end: i, kind: '"'}
}

// seq is the span of the sequence node n: its elements, and for a flow
// sequence its brackets; a block one's elements are separated by a new
// line, the items' indent and "- ".
func (t *yamlText) seq(n *yaml.Node) *span {
	flow := n.Style&yaml.FlowStyle != 0
	s := &span{start: t.offset(n.Line, n.Column), kind: '['}
	for _, c := range n.Content {
		s.elems = append(s.elems, t.scalar(c, flow))
	}
	if s.start < 0 {
		return &span{start: -1, end: -1, kind: 'v'}
	}
	if !flow {
		if len(n.Content) == 0 {
			return &span{start: -1, end: -1, kind: 'v'}
		}
		first := s.elems[0].start
		if first < 0 {
			return s
		}
		ls := bytes.LastIndexByte(t.b[:first], '\n') + 1
		dash := bytes.IndexByte(t.b[ls:first], '-')
		if dash < 0 {
			return &span{start: -1, end: -1, kind: 'v'}
		}
		s.sep = "\n" + string(t.b[ls:ls+dash]) + string(t.b[ls+dash:first])
		s.end = first // not used for a block sequence
		return s
	}
	// A flow sequence ends at its "]": after the last element.
	at := s.start + 1
	if k := len(s.elems); k > 0 && s.elems[k-1].end > 0 {
		at = s.elems[k-1].end
	}
	for depth := 0; at < len(t.b); at++ {
		if t.b[at] == '[' {
			depth++
		}
		if t.b[at] == ']' {
			if depth == 0 {
				s.end = at + 1
				return s
			}
			depth--
		}
	}
	return &span{start: -1, end: -1, kind: 'v'}
}

// yamlString decodes one YAML scalar token as a string.
func yamlString(tok []byte) (string, bool) {
	var n yaml.Node
	if yaml.Unmarshal(tok, &n) != nil || len(n.Content) != 1 || n.Content[0].Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Content[0].Value, true
}

// yamlLang is the syntax of YAML files, for an entry whose missing "args"
// goes on a new line after its cmd, at indent.
func yamlLang(indent string) lang {
	return lang{
		str: func(b []byte, s *span) (string, bool) {
			if s == nil || s.kind != '"' || s.start < 0 {
				return "", false
			}
			return yamlString(b[s.start:s.end])
		},
		newArgs: func(items string) string { return "\n" + indent + "args: [" + items + "]" },
	}
}

// yamlEntrySpans locates the stdio extensions of Goose's config.yaml, each
// as a span with its "command" (cmd) and "args" members.
func yamlEntrySpans(b []byte, host string, scope paths.Scope, f format) ([]entrySpan, error) {
	servers, problems := Parse(b, "", host, scope, "")
	for _, p := range problems {
		if p.Server == "" {
			return nil, p.Err
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: cannot locate the entries", ErrSyntax)
	}
	t := newYAMLText(b)
	exts := mappingValue(doc.Content[0], f.keys[0])
	if exts == nil || exts.Kind != yaml.MappingNode {
		return nil, nil
	}
	var out []entrySpan
	for i := 0; i+1 < len(exts.Content); i += 2 {
		name, entry := exts.Content[i].Value, exts.Content[i+1]
		s, err := tomlServer(name, servers, problems)
		if errors.Is(err, errNotServer) || entry.Kind != yaml.MappingNode {
			continue
		}
		obj := &span{kind: '{'}
		indent := ""
		if k := mappingKey(entry, "cmd"); k != nil {
			obj.members = append(obj.members, spanMember{"command", t.scalar(mappingValue(entry, "cmd"), false)})
			if at := t.offset(k.Line, k.Column); at >= 0 {
				indent = string(t.b[t.lines[k.Line-1]:at])
			}
		}
		if v := mappingValue(entry, "args"); v != nil {
			a := &span{start: -1, end: -1, kind: 'v'}
			if v.Kind == yaml.SequenceNode {
				a = t.seq(v)
			}
			obj.members = append(obj.members, spanMember{"args", a})
		}
		s.Name = name
		out = append(out, entrySpan{server: s, span: obj, err: err, lang: yamlLang(indent)})
	}
	return out, nil
}

// mappingKey and mappingValue return the key and value nodes of a
// mapping's last member named key (nil when there is none).
func mappingKey(m *yaml.Node, key string) *yaml.Node {
	for i := len(m.Content) - 2; i >= 0; i -= 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := len(m.Content) - 2; i >= 0; i -= 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
