package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// WrapOptions say which entries of a file Wrap and Unwrap change, and how.
type WrapOptions struct {
	// Sonde is the command of a wrapped entry: sonde's absolute path.
	Sonde string
	// Servers are the names of the entries to change; All changes every
	// entry instead.
	Servers []string
	All     bool
	// Project is the project folder whose local-scope entries of Claude
	// Code's ~/.claude.json are read (as in ReadFile).
	Project string
}

// WrapState is what Wrap or Unwrap did to one entry.
type WrapState string

// The states of a WrapChange.
const (
	// Wrapped: the entry now launches sonde tap in front of its command.
	Wrapped WrapState = "wrapped"
	// Unwrapped: the entry launches its own command again.
	Unwrapped WrapState = "unwrapped"
	// AlreadyWrapped: Wrap left an entry that launches sonde tap already.
	AlreadyWrapped WrapState = "already wrapped"
	// NotWrapped: Unwrap left an entry that does not launch sonde tap.
	NotWrapped WrapState = "not wrapped"
	// URLEntry: an entry of a server over HTTP, never edited.
	URLEntry WrapState = "url"
	// Skipped: the entry could not be changed (Err says why).
	Skipped WrapState = "skipped"
)

// WrapChange is what happened to one entry. Line is the first line (from
// 1) of the file that changed; Before and After are the lines of the file
// that the change touched, as they were and as they become.
type WrapChange struct {
	Server  string
	Scope   string
	Project string
	State   WrapState
	URL     string // a URL entry's URL
	Line    int
	Before  []string
	After   []string
	Err     error
	edits   []edit
}

// edit replaces the bytes [start, end) of a file with text.
type edit struct {
	start, end int
	text       string
}

// wrapLabelEq is the form of the label flag in the args Wrap adds to an
// entry that had none: Unwrap then removes the whole "args" member, and
// tells it apart from an entry that had an empty "args" by this form.
const wrapLabelEq = "--label="

// Wrap rewrites the stdio entries of one host config file's contents b
// (host, scope as in Parse) so that the host launches
// `SONDE tap --label NAME -- COMMAND ARG...` instead of COMMAND ARG...:
// the entry's "command" becomes o.Sonde and "tap", "--label", NAME, "--"
// and the original command go in front of its "args" (added when missing).
// Only those bytes change: comments, key order and layout are kept, and
// Unwrap gives back the file byte for byte. An entry already wrapped is
// left as it is. It returns the new contents and one change per entry
// selected; an error when the file cannot be read as a host config, or
// when no entry has a name asked for.
func Wrap(b []byte, host string, scope paths.Scope, o WrapOptions) ([]byte, []WrapChange, error) {
	return rewrite(b, host, scope, o, wrapEntry)
}

// Unwrap gives back the entries Wrap changed: an entry whose command is
// sonde (o.Sonde, or a file named sonde) and whose args start with "tap"
// and hold "--" gets the command after "--" as its command and what
// follows as its args. An entry that is not wrapped is left as it is.
func Unwrap(b []byte, host string, scope paths.Scope, o WrapOptions) ([]byte, []WrapChange, error) {
	return rewrite(b, host, scope, o, unwrapEntry)
}

// entrySpan is one server entry: what Parse reads of it, and its span.
type entrySpan struct {
	server Server
	span   *span
	err    error
}

func rewrite(b []byte, host string, scope paths.Scope, o WrapOptions, fn func([]byte, *span, Server, WrapOptions) WrapChange) ([]byte, []WrapChange, error) {
	f := formatOf(host, scope)
	if _, err := decodeObject(b, f.jsonc); err != nil {
		return nil, nil, err
	}
	root, err := scanSpans(stripJSONC(b))
	if err != nil || root.kind != '{' {
		return nil, nil, fmt.Errorf("%w: cannot locate the entries", ErrSyntax)
	}
	entries := locateEntries(b, root, host, scope, o.Project, f)
	want := map[string]bool{}
	for _, n := range o.Servers {
		want[n] = true
	}
	var changes []WrapChange
	found := map[string]bool{}
	for _, e := range entries {
		if !o.All && !want[e.server.Name] {
			continue
		}
		found[e.server.Name] = true
		var c WrapChange
		switch {
		case e.err != nil:
			c = WrapChange{State: Skipped, Err: e.err}
		case e.server.Transport != Stdio:
			c = WrapChange{State: URLEntry, URL: e.server.URL}
		default:
			c = fn(b, e.span, e.server, o)
		}
		c.Server, c.Scope, c.Project = e.server.Name, e.server.Scope, e.server.Project
		if len(c.edits) > 0 {
			c.Line, c.Before, c.After = lineDiff(b, c.edits)
		}
		changes = append(changes, c)
	}
	var missing []string
	for _, n := range o.Servers {
		if !found[n] {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
	}
	if len(missing) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.server.Name)
		}
		msg := strings.Join(missing, ", ")
		if len(names) > 0 {
			msg += "; the servers are: " + strings.Join(names, ", ")
		}
		return nil, nil, fmt.Errorf("%w %s", ErrNotFound, msg)
	}
	var edits []edit
	for _, c := range changes {
		edits = append(edits, c.edits...)
	}
	out, ok := apply(b, edits)
	if !ok {
		return nil, nil, fmt.Errorf("%w: entries overlap", ErrShape)
	}
	return out, changes, nil
}

// locateEntries returns the server entries of the file in file order,
// with what Parse reads of each (the last of several members of one name,
// the one hosts keep).
func locateEntries(b []byte, root *span, host string, scope paths.Scope, project string, f format) []entrySpan {
	base := Server{Host: host, Scope: scope.String(), dialect: f.dialect}
	if host == HostFile {
		base.Scope = "file"
	}
	var out []entrySpan
	add := func(obj *span, base Server) {
		if obj == nil || obj.kind != '{' {
			return
		}
		for _, m := range obj.members {
			if m.key == "" || obj.member(m.key) != m.value {
				continue // a key repeated later: the host keeps the last
			}
			s, err := parseEntry(m.key, json.RawMessage(stripJSONC(b[m.value.start:m.value.end])), base, f)
			s.Name, s.Scope, s.Project = m.key, base.Scope, base.Project
			out = append(out, entrySpan{server: s, span: m.value, err: err})
		}
	}
	for _, key := range f.keys {
		add(root.member(key), base)
	}
	if f.claudeUser && project != "" {
		projects := root.member("projects")
		for dir := filepath.Clean(project); projects != nil; {
			if p := projects.member(dir); p != nil {
				local := base
				local.Scope, local.Project = ScopeLocal, dir
				add(p.member("mcpServers"), local)
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return out
}

// jsonString is s as a JSON string, without escaping <, > and &.
func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// stringValue decodes a string span of b.
func stringValue(b []byte, s *span) (string, bool) {
	if s == nil || s.kind != '"' {
		return "", false
	}
	var v string
	if json.Unmarshal(b[s.start:s.end], &v) != nil {
		return "", false
	}
	return v, true
}

// wrappedArgs reports whether entry launches sonde tap, and where: the
// index in args of "--" (the original command follows it).
func wrappedArgs(b []byte, entry *span, sonde string) (cmd, args *span, dash int, ok bool) {
	cmd, args = entry.member("command"), entry.member("args")
	c, isStr := stringValue(b, cmd)
	if !isStr || args == nil || args.kind != '[' || len(args.elems) < 3 {
		return cmd, args, 0, false
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(c, `\`, "/")))
	if c != sonde && base != "sonde" && base != "sonde.exe" {
		return cmd, args, 0, false
	}
	if v, _ := stringValue(b, args.elems[0]); v != "tap" {
		return cmd, args, 0, false
	}
	for i := 1; i+1 < len(args.elems); i++ {
		v, isStr := stringValue(b, args.elems[i])
		if !isStr {
			return cmd, args, 0, false
		}
		if v == "--" {
			if _, isStr := stringValue(b, args.elems[i+1]); !isStr {
				return cmd, args, 0, false
			}
			return cmd, args, i, true
		}
	}
	return cmd, args, 0, false
}

func wrapEntry(b []byte, entry *span, s Server, o WrapOptions) WrapChange {
	if _, _, _, ok := wrappedArgs(b, entry, o.Sonde); ok {
		return WrapChange{State: AlreadyWrapped}
	}
	cmd, args := entry.member("command"), entry.member("args")
	if _, ok := stringValue(b, cmd); !ok {
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"command\" is not a string", ErrShape)}
	}
	if args != nil && args.kind != '[' {
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"args\" is %s, not an array: edit it by hand", ErrShape, kindOf(json.RawMessage(b[args.start:args.end])))}
	}
	orig := string(b[cmd.start:cmd.end])
	edits := []edit{{cmd.start, cmd.end, jsonString(o.Sonde)}}
	switch {
	case args == nil:
		edits = append(edits, edit{cmd.end, cmd.end, `, "args": ["tap", ` + jsonString(wrapLabelEq+s.Name) + `, "--", ` + orig + `]`})
	case len(args.elems) == 0:
		edits = append(edits, edit{args.start + 1, args.start + 1, `"tap", "--label", ` + jsonString(s.Name) + `, "--", ` + orig})
	default:
		first := args.elems[0].start
		edits = append(edits, edit{first, first, `"tap", "--label", ` + jsonString(s.Name) + `, "--", ` + orig + `, `})
	}
	return WrapChange{State: Wrapped, edits: edits}
}

func unwrapEntry(b []byte, entry *span, s Server, o WrapOptions) WrapChange {
	cmd, args, dash, ok := wrappedArgs(b, entry, o.Sonde)
	if !ok {
		return WrapChange{State: NotWrapped}
	}
	el := args.elems
	orig := el[dash+1]
	edits := []edit{{cmd.start, cmd.end, string(b[orig.start:orig.end])}}
	label, _ := stringValue(b, el[1])
	added := dash == 2 && len(el) == 4 && strings.HasPrefix(label, wrapLabelEq)
	if added {
		var raw []string
		for _, e := range el {
			raw = append(raw, string(b[e.start:e.end]))
		}
		added = string(b[cmd.end:args.end]) == `, "args": [`+strings.Join(raw, ", ")+`]`
	}
	switch {
	case added: // Wrap added the "args" member
		edits = append(edits, edit{cmd.end, args.end, ""})
	case dash+2 == len(el):
		edits = append(edits, edit{el[0].start, orig.end, ""})
	default:
		edits = append(edits, edit{el[0].start, el[dash+2].start, ""})
	}
	if edits[0].start > edits[1].start {
		edits[0], edits[1] = edits[1], edits[0]
	}
	return WrapChange{State: Unwrapped, edits: edits}
}

// apply makes the edits to b; false when two of them overlap.
func apply(b []byte, edits []edit) ([]byte, bool) {
	edits = append([]edit(nil), edits...)
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.start < at || e.end < e.start || e.end > len(b) {
			return nil, false
		}
		out.Write(b[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(b[at:])
	return out.Bytes(), true
}

// lineDiff returns the first line the edits touch, and the lines they
// touch before and after.
func lineDiff(b []byte, edits []edit) (int, []string, []string) {
	lo, hi := edits[0].start, edits[0].end
	for _, e := range edits {
		lo, hi = min(lo, e.start), max(hi, e.end)
	}
	ls := bytes.LastIndexByte(b[:lo], '\n') + 1
	le := len(b)
	if i := bytes.IndexByte(b[hi:], '\n'); i >= 0 {
		le = hi + i
	}
	after, ok := apply(b[:le], edits)
	if !ok {
		return 0, nil, nil
	}
	line := 1 + bytes.Count(b[:ls], []byte("\n"))
	split := func(s []byte) []string {
		lines := strings.Split(string(s), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
		return lines
	}
	return line, split(b[ls:le]), split(after[ls:])
}
