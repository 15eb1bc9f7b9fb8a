package hostconfig

import (
	"bytes"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// A tomlEntry is one [mcp_servers.NAME] server of a TOML file as sonde
// wrap edits it: spans of its "command" string and "args" array (elems
// only when every element is a string), and how a missing "args" is added
// (right after the command's value: sep, then prefix "args = [...]").
type tomlEntry struct {
	name        string
	cmd, args   *span
	cmdEnd      int
	sep, prefix string
}

// tomlEntries reads the server entries under key (mcp_servers) of b in
// file order, with the spans sonde wrap edits. It reads the forms Codex
// writes and documents: [key.NAME] tables, with command/args key-values
// or dotted keys, and NAME = { … } inline tables under [key].
func tomlEntries(b []byte, key string) ([]*tomlEntry, error) {
	var p unstable.Parser
	p.Reset(b)
	var table []string
	byName := map[string]*tomlEntry{}
	var order []*tomlEntry
	entry := func(name string) *tomlEntry {
		e, ok := byName[name]
		if !ok {
			e = &tomlEntry{name: name}
			byName[name] = e
			order = append(order, e)
		}
		return e
	}
	for p.NextExpression() {
		expr := p.Expression()
		switch expr.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(expr.Key())
			if expr.Kind == unstable.Table && len(table) == 2 && table[0] == key {
				entry(table[1])
			}
		case unstable.KeyValue:
			path := append(append([]string(nil), table...), keyParts(expr.Key())...)
			tomlKeyValue(&p, b, key, path, expr, "\n", entry)
		}
	}
	if err := p.Error(); err != nil {
		return nil, err
	}
	return order, nil
}

// tomlKeyValue records a key-value of a server entry: its command or args,
// or the members of an inline table that is one entry.
func tomlKeyValue(p *unstable.Parser, b []byte, key string, path []string, kv *unstable.Node, sep string, entry func(string) *tomlEntry) {
	if len(path) < 2 || path[0] != key {
		return
	}
	v := kv.Value()
	if len(path) == 2 && v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.KeyValue {
				tomlKeyValue(p, b, key, append(path[:2:2], keyParts(c.Key())...), c, ", ", entry)
			}
		}
		entry(path[1])
		return
	}
	if len(path) != 3 {
		if len(path) > 3 {
			entry(path[1])
		}
		return
	}
	e := entry(path[1])
	start, end := int(kv.Raw.Offset), int(kv.Raw.Offset+kv.Raw.Length)
	switch path[2] {
	case "command":
		if v.Kind != unstable.String {
			return
		}
		e.cmd = &span{start: int(v.Raw.Offset), end: int(v.Raw.Offset + v.Raw.Length), kind: '"'}
		e.cmdEnd, e.sep = e.cmd.end, sep
		last := lastKey(kv.Key())
		e.prefix = string(b[start:int(last.Raw.Offset)])
	case "args":
		if v.Kind != unstable.Array {
			e.args = &span{start: start, end: end, kind: 'v'}
			return
		}
		open := start + bytes.IndexByte(b[start:end], '[')
		arr := &span{start: open, end: end, kind: '['}
		it := v.Children()
		for it.Next() {
			c := it.Node()
			switch c.Kind {
			case unstable.Comment:
				continue
			case unstable.String:
				arr.elems = append(arr.elems, &span{start: int(c.Raw.Offset), end: int(c.Raw.Offset + c.Raw.Length), kind: '"'})
			default:
				arr.elems = append(arr.elems, &span{start: -1, end: -1, kind: 'v'})
			}
		}
		e.args = arr
	}
}

func keyParts(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

func lastKey(it unstable.Iterator) *unstable.Node {
	var last *unstable.Node
	for it.Next() {
		last = it.Node()
	}
	return last
}

// tomlServerOrder is, for each of keys, the names of its servers in file
// order (nil when the file cannot be read so: the names are sorted then).
func tomlServerOrder(b []byte, keys []string) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		entries, err := tomlEntries(b, k)
		if err != nil {
			continue
		}
		for _, e := range entries {
			out[k] = append(out[k], e.name)
		}
	}
	return out
}

// tomlString decodes one TOML string token (any of its four forms).
func tomlString(tok []byte) (string, bool) {
	var v struct{ V string }
	doc := append([]byte("V = "), tok...)
	if toml.Unmarshal(doc, &v) != nil {
		return "", false
	}
	return v.V, true
}
