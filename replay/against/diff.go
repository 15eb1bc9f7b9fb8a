package against

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// volatileKeys are object members ignored at any depth: they change from
// one run to the next without the behaviour changing.
var volatileKeys = []string{
	"_meta", "timestamp", "createdAt", "updatedAt", "created_at", "updated_at",
	"lastModified", "expiresAt", "sessionId", "session_id", "requestId", "request_id",
	"traceId", "trace_id",
}

// Diff is one difference between a recorded and a new JSON value.
type Diff struct {
	// Path locates it: result.content[0].text.
	Path string `json:"path"`
	// Recorded and Now are the values as JSON; nil when absent on that side.
	Recorded json.RawMessage `json:"recorded,omitempty"`
	Now      json.RawMessage `json:"now,omitempty"`
}

// String is `path: "a" → "b"`, with (absent) for a missing side.
func (d Diff) String() string {
	return d.Path + ": " + show(d.Recorded) + " → " + show(d.Now)
}

func show(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	s := string(v)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

// segment is one step of a path: an object member or an array index.
type segment struct {
	key   string
	index int // -1 for a member
}

// Path is an --ignore pattern: members and indexes from the response
// (result or error), "*" for any member, "[*]" for any index; a leading
// ".." lets it match at any depth.
type Path struct {
	text     string
	anyDepth bool
	segs     []segment // key "*" with index -1: any member; index -2: any index
}

// String returns the pattern as given.
func (p Path) String() string { return p.text }

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$-]*`)

// ParsePath parses an --ignore pattern: result.content[0].text,
// result.content[*].text, error.data, ..timestamp, result["odd key"].
// A leading "$." is accepted and ignored.
func ParsePath(s string) (Path, error) {
	p := Path{text: s}
	rest := strings.TrimPrefix(s, "$")
	if strings.HasPrefix(rest, "..") {
		p.anyDepth, rest = true, rest[2:]
	} else {
		rest = strings.TrimPrefix(rest, ".")
	}
	first := true
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if strings.HasPrefix(rest, `["`) {
				key, n, err := quotedKey(rest[1:])
				if err != nil {
					return Path{}, fmt.Errorf("--ignore %q: %v", s, err)
				}
				if !strings.HasPrefix(rest[1+n:], "]") {
					return Path{}, fmt.Errorf("--ignore %q: want ] after the quoted key", s)
				}
				p.segs = append(p.segs, segment{key: key, index: -1})
				rest = rest[2+n:]
				break
			}
			if end < 0 {
				return Path{}, fmt.Errorf("--ignore %q: [ without ]", s)
			}
			inner := rest[1:end]
			if inner == "*" {
				p.segs = append(p.segs, segment{index: -2})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || strings.HasPrefix(inner, "+") {
					return Path{}, fmt.Errorf("--ignore %q: [%s] is not an index (want [N] or [*])", s, inner)
				}
				p.segs = append(p.segs, segment{index: n})
			}
			rest = rest[end+1:]
		case strings.HasPrefix(rest, ".") && !first:
			rest = rest[1:]
			fallthrough
		default:
			if strings.HasPrefix(rest, "*") {
				p.segs = append(p.segs, segment{key: "*", index: -1})
				rest = rest[1:]
				break
			}
			id := identRe.FindString(rest)
			if id == "" {
				return Path{}, fmt.Errorf("--ignore %q: expected a member name at %q (quote odd names: [\"a b\"])", s, rest)
			}
			p.segs = append(p.segs, segment{key: id, index: -1})
			rest = rest[len(id):]
		}
		first = false
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return Path{}, fmt.Errorf("--ignore %q: unexpected %q", s, rest)
		}
	}
	if len(p.segs) == 0 {
		return Path{}, fmt.Errorf("--ignore %q: an empty path", s)
	}
	return p, nil
}

// quotedKey reads a JSON string at the start of s and returns it and its
// length in bytes.
func quotedKey(s string) (string, int, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var key string
	if err := dec.Decode(&key); err != nil {
		return "", 0, fmt.Errorf("bad quoted key: %v", err)
	}
	return key, int(dec.InputOffset()), nil
}

// matches reports whether the pattern matches path or a prefix of it (what
// is under an ignored path is ignored too).
func (p Path) matches(path []segment) bool {
	starts := []int{0}
	if p.anyDepth {
		starts = starts[:0]
		for i := range path {
			starts = append(starts, i)
		}
	}
	for _, st := range starts {
		if p.matchAt(path[st:]) {
			return true
		}
	}
	return false
}

func (p Path) matchAt(path []segment) bool {
	if len(path) < len(p.segs) {
		return false
	}
	for i, s := range p.segs {
		g := path[i]
		switch {
		case s.index == -2:
			if g.index < 0 {
				return false
			}
		case s.index >= 0:
			if g.index != s.index {
				return false
			}
		case s.key == "*":
			if g.index >= 0 {
				return false
			}
		default:
			if g.index >= 0 || g.key != s.key {
				return false
			}
		}
	}
	return true
}

// formatPath renders a path as result.content[0].text.
func formatPath(path []segment) string {
	var b strings.Builder
	for i, s := range path {
		switch {
		case s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case identRe.FindString(s.key) == s.key && s.key != "":
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			q, _ := json.Marshal(s.key)
			b.WriteString("[" + string(q) + "]")
		}
	}
	return b.String()
}

// differ compares two JSON values.
type differ struct {
	ignore   []Path
	volatile map[string]bool
	out      []Diff
}

// compare diffs recorded and now (JSON texts) under the root member name
// ("result" or "error"), ignoring the volatile keys and the patterns.
func compare(root string, recorded, now json.RawMessage, ignore []Path) []Diff {
	d := &differ{ignore: ignore, volatile: map[string]bool{}}
	for _, k := range volatileKeys {
		d.volatile[k] = true
	}
	d.walk([]segment{{key: root, index: -1}}, decode(recorded), decode(now))
	return d.out
}

func decode(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

func encode(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func (d *differ) ignored(path []segment) bool {
	for _, p := range d.ignore {
		if p.matches(path) {
			return true
		}
	}
	return false
}

func (d *differ) walk(path []segment, a, b any) {
	if d.ignored(path) {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d.volatile[k] {
				continue
			}
			p := append(path[:len(path):len(path)], segment{key: k, index: -1})
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case inA && inB:
				d.walk(p, x, y)
			case !d.ignored(p) && inA:
				d.out = append(d.out, Diff{Path: formatPath(p), Recorded: encode(x)})
			case !d.ignored(p):
				d.out = append(d.out, Diff{Path: formatPath(p), Now: encode(y)})
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(av), len(bv)) {
			p := append(path[:len(path):len(path)], segment{index: i})
			switch {
			case i < len(av) && i < len(bv):
				d.walk(p, av[i], bv[i])
			case d.ignored(p):
			case i < len(av):
				d.out = append(d.out, Diff{Path: formatPath(p), Recorded: encode(av[i])})
			default:
				d.out = append(d.out, Diff{Path: formatPath(p), Now: encode(bv[i])})
			}
		}
		return
	}
	if sameScalar(a, b) {
		return
	}
	d.out = append(d.out, Diff{Path: formatPath(path), Recorded: encode(a), Now: encode(b)})
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// sameScalar compares two scalars (or a scalar and a container, which
// differ): numbers by value, and two RFC 3339 timestamps or two UUIDs are
// the same (volatile values).
func sameScalar(a, b any) bool {
	switch av := a.(type) {
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		x, err1 := strconv.ParseFloat(string(av), 64)
		y, err2 := strconv.ParseFloat(string(bv), 64)
		return err1 == nil && err2 == nil && x == y
	case string:
		bv, ok := b.(string)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		if isTime(av) && isTime(bv) {
			return true
		}
		return uuidRe.MatchString(av) && uuidRe.MatchString(bv)
	case bool:
		bv, ok := b.(bool)
		return ok && av == bv
	case nil:
		return b == nil
	}
	return false
}

func isTime(s string) bool {
	if len(s) < 20 {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
