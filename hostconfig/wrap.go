package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
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
	// TapFlags are the flags of sonde tap by name as written ("--record",
	// "-h"), true for one that takes a value: Unwrap reads an entry's tap
	// flags with them. --label and WrapMarker are known without them.
	TapFlags map[string]bool
}

// WrapMarker is the flag Wrap puts right after "tap" in the args of each
// entry it wraps, so that unwrap --all changes only those. sonde tap
// accepts it and does nothing with it. A flag of sonde's own argv, rather
// than a field of the entry, since every host passes args through as they
// are, where a field it does not know may be refused or dropped by a host
// that validates or rewrites its file.
const WrapMarker = "--wrapped-by-sonde"

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
	// NotMarked: Unwrap with All left an entry that launches sonde tap
	// without WrapMarker (by hand, or written by a sonde before it).
	NotMarked WrapState = "not marked"
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
// `SONDE tap --wrapped-by-sonde --label NAME -- COMMAND ARG...` instead of
// COMMAND ARG...: the entry's "command" becomes o.Sonde and "tap",
// WrapMarker, "--label", NAME, "--" and the original command go in front
// of its "args" (added when missing). Only those bytes change: comments,
// key order and layout are kept, and Unwrap gives back the file byte for
// byte. An entry that launches sonde tap already (marked or not) is left
// as it is. It returns the new contents and one change per entry
// selected; an error when the file cannot be read as a host config, or
// when no entry has a name asked for.
func Wrap(b []byte, host string, scope paths.Scope, o WrapOptions) ([]byte, []WrapChange, error) {
	return rewrite(b, host, scope, o, false)
}

// Unwrap gives back the entries Wrap changed. An entry launches sonde tap
// when its command is sonde (o.Sonde, or a file named sonde) and its args
// start with "tap"; its tap flags are read in order, each with its value
// (o.TapFlags says which take one), up to the "--" after which come the
// server's command, which becomes the entry's command again, and its args.
// With o.All, only entries that carry WrapMarker (those Wrap wrote) are
// changed: one the user pointed at sonde tap by hand, or that a sonde
// without the marker wrote, is left as it is (NotMarked); named in
// o.Servers, it is unwrapped too. An entry that does not launch sonde tap
// is left as it is.
func Unwrap(b []byte, host string, scope paths.Scope, o WrapOptions) ([]byte, []WrapChange, error) {
	return rewrite(b, host, scope, o, true)
}

// entrySpan is one server entry: what Parse reads of it, its span, and
// the syntax of its file.
type entrySpan struct {
	server Server
	span   *span
	err    error
	lang   lang
}

// lang is what the edits of one entry need to know of its file's syntax.
type lang struct {
	// str decodes a string span of b.
	str func(b []byte, s *span) (string, bool)
	// newArgs is the text put right after the command's value of an entry
	// without "args", for the args array holding items.
	newArgs func(items string) string
	// argv: the entry's "command" is an array of the program and its
	// arguments (opencode), with no "args".
	argv bool
}

// jsonLang is the syntax of JSON and JSONC files.
var jsonLang = lang{str: stringValue, newArgs: func(items string) string { return `, "args": [` + items + `]` }}

func rewrite(b []byte, host string, scope paths.Scope, o WrapOptions, unwrap bool) ([]byte, []WrapChange, error) {
	f := formatOf(host, scope)
	entries, err := entriesOf(b, host, scope, o.Project, f)
	if err != nil {
		return nil, nil, err
	}
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
		case e.lang.argv && unwrap:
			c = unwrapArgv(b, e.span, o, e.lang)
		case e.lang.argv:
			c = wrapArgv(b, e.span, e.server, o, e.lang)
		case unwrap:
			c = unwrapEntry(b, e.span, e.server, o, e.lang)
		default:
			c = wrapEntry(b, e.span, e.server, o, e.lang)
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
	if f.text != textJSON {
		if err := verifyEdits(out, host, scope, o, entries, changes); err != nil {
			return nil, nil, err
		}
	}
	return out, changes, nil
}

// entriesOf locates the server entries of a file of format f.
func entriesOf(b []byte, host string, scope paths.Scope, project string, f format) ([]entrySpan, error) {
	switch f.text {
	case textTOML:
		return tomlEntrySpans(b, host, scope, f)
	case textYAML:
		return yamlEntrySpans(b, host, scope, f)
	}
	if _, err := decodeObject(b, f.jsonc); err != nil {
		return nil, err
	}
	root, err := scanSpans(stripJSONC(b))
	if err != nil || root.kind != '{' {
		return nil, fmt.Errorf("%w: cannot locate the entries", ErrSyntax)
	}
	return locateEntries(b, root, host, scope, project, f), nil
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
	l := jsonLang
	l.argv = host == paths.Opencode
	add := func(obj *span, base Server) {
		if obj == nil || obj.kind != '{' {
			return
		}
		for _, m := range obj.members {
			if m.key == "" || obj.member(m.key) != m.value {
				continue // a key repeated later: the host keeps the last
			}
			s, err := parseEntry(m.key, json.RawMessage(stripJSONC(b[m.value.start:m.value.end])), base, f)
			if errors.Is(err, errNotServer) {
				continue
			}
			s.Name, s.Scope, s.Project = m.key, base.Scope, base.Project
			out = append(out, entrySpan{server: s, span: m.value, err: err, lang: l})
		}
	}
	for _, key := range f.keys {
		obj := root.member(key)
		if host == paths.Opencode {
			if inner := obj.member("servers"); inner != nil && inner.kind == '{' && inner.member("type") == nil {
				obj = inner
			}
		}
		add(obj, base)
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

// tapEntry is an entry that launches sonde tap, read by position: its
// "command" and "args", where the tap's flags end, and what they hold.
type tapEntry struct {
	cmd, args *span
	// dash is the index in args of the "--" that ends the tap's flags (the
	// server's command follows it). It is found by reading the flags in
	// order, each with its value, so a value "--" (the label of a server
	// named "--") is not taken for it, nor a "--" among the server's args.
	dash int
	// marked: WrapMarker is among the tap's flags (sonde wrap wrote it).
	marked bool
	// labelEq: the label is given as --label=NAME, the form sonde wrap uses
	// when it added the "args" member.
	labelEq bool
}

// readTap reads entry as a launch of sonde tap. launches is whether its
// command is sonde (o.Sonde, or a file named sonde or sonde.exe) and its
// args an array starting with "tap"; err, when it launches sonde tap but
// where the server's command starts cannot be told: an argument that is
// not a string, a flag o.TapFlags does not have, no "--", nothing after it.
func readTap(b []byte, entry *span, o WrapOptions, l lang) (t tapEntry, launches bool, err error) {
	t.cmd, t.args = entry.member("command"), entry.member("args")
	c, isStr := l.str(b, t.cmd)
	if !isStr || t.args == nil || t.args.kind != '[' || len(t.args.elems) == 0 {
		return t, false, nil
	}
	if !isSonde(c, o) {
		return t, false, nil
	}
	if v, _ := l.str(b, t.args.elems[0]); v != "tap" {
		return t, false, nil
	}
	t.dash, t.marked, t.labelEq, err = readTapFlags(b, t.args.elems, o, l)
	return t, true, err
}

// isSonde reports whether the command c is sonde: o.Sonde, or a file
// named sonde or sonde.exe.
func isSonde(c string, o WrapOptions) bool {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(c, `\`, "/")))
	return c == o.Sonde || base == "sonde" || base == "sonde.exe"
}

// readTapFlags reads the flags of sonde tap in el (el[0] is "tap"), each
// with its value, up to the "--" before the server's command (its index).
func readTapFlags(b []byte, el []*span, o WrapOptions, l lang) (dash int, marked, labelEq bool, err error) {
	for i := 1; i < len(el); i++ {
		v, isStr := l.str(b, el[i])
		if !isStr {
			return 0, false, false, fmt.Errorf("%w: argument %d of sonde tap is %s, not a string", ErrShape, i, describe(b, el[i]))
		}
		name, _, hasValue := strings.Cut(v, "=")
		switch {
		case v == "--":
			if i+1 == len(el) {
				return 0, false, false, fmt.Errorf("%w: no server command after the \"--\" of sonde tap", ErrShape)
			}
			if _, isStr := l.str(b, el[i+1]); !isStr {
				return 0, false, false, fmt.Errorf("%w: the server command after \"--\" is not a string", ErrShape)
			}
			return i, marked, labelEq, nil
		case v == WrapMarker:
			marked = true
		case !strings.HasPrefix(v, "-") || v == "-":
			return 0, false, false, fmt.Errorf("%w: sonde tap has %s before \"--\", which no flag takes", ErrShape, jsonString(v))
		case strings.HasPrefix(v, "--") && hasValue:
			if _, known := tapFlag(name, o.TapFlags); !known {
				return 0, false, false, fmt.Errorf("%w: sonde tap has no flag %s", ErrShape, jsonString(name))
			}
			labelEq = labelEq || name == "--label"
		default:
			takes, known := tapFlag(v, o.TapFlags)
			if !known {
				return 0, false, false, fmt.Errorf("%w: sonde tap has no flag %s", ErrShape, jsonString(v))
			}
			if takes {
				i++ // its value, whatever it is
			}
		}
	}
	return 0, false, false, fmt.Errorf("%w: no \"--\" before the server command in the args of sonde tap", ErrShape)
}

// describe names the kind of the value s of b, for an error message.
func describe(b []byte, s *span) string {
	if s == nil || s.start < 0 || s.end > len(b) {
		return "not a plain value"
	}
	if s.kind == '"' {
		return "a string"
	}
	if k := kindOf(json.RawMessage(b[s.start:s.end])); k != "invalid JSON" {
		return k
	}
	return "not a string"
}

// tapFlag reports whether sonde tap has the flag name (as written: "--label",
// "-h") and whether it takes a value. --label and WrapMarker are always
// known: they are what sonde wrap writes.
func tapFlag(name string, flags map[string]bool) (takesValue, known bool) {
	switch name {
	case "--label":
		return true, true
	case WrapMarker:
		return false, true
	}
	takesValue, known = flags[name]
	return takesValue, known
}

func wrapEntry(b []byte, entry *span, s Server, o WrapOptions, l lang) WrapChange {
	if _, launches, _ := readTap(b, entry, o, l); launches {
		return WrapChange{State: AlreadyWrapped}
	}
	cmd, args := entry.member("command"), entry.member("args")
	if _, ok := l.str(b, cmd); !ok {
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"command\" is not a string", ErrShape)}
	}
	if args != nil && args.kind != '[' {
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"args\" is %s, not an array: edit it by hand", ErrShape, describe(b, args))}
	}
	for _, e := range argsElems(args) {
		if e.start < 0 {
			return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"args\" holds a value that is not a string: edit it by hand", ErrShape)}
		}
	}
	orig := string(b[cmd.start:cmd.end])
	edits := []edit{{cmd.start, cmd.end, jsonString(o.Sonde)}}
	tap := `"tap", ` + jsonString(WrapMarker) + `, `
	switch {
	case args == nil:
		edits = append(edits, edit{cmd.end, cmd.end, l.newArgs(tap + jsonString(wrapLabelEq+s.Name) + `, "--", ` + orig)})
	case len(args.elems) == 0:
		edits = append(edits, edit{args.start + 1, args.start + 1, tap + `"--label", ` + jsonString(s.Name) + `, "--", ` + orig})
	default:
		first := args.elems[0].start
		sep := args.sep // the text between two elements: ", ", or a YAML block list's "\n  - "
		if sep == "" {
			sep = ", "
		}
		items := []string{`"tap"`, jsonString(WrapMarker), `"--label"`, jsonString(s.Name), `"--"`, orig, ""}
		edits = append(edits, edit{first, first, strings.Join(items, sep)})
	}
	return WrapChange{State: Wrapped, edits: edits}
}

func unwrapEntry(b []byte, entry *span, s Server, o WrapOptions, l lang) WrapChange {
	t, launches, err := readTap(b, entry, o, l)
	switch {
	case !launches:
		return WrapChange{State: NotWrapped}
	case o.All && !t.marked:
		return WrapChange{State: NotMarked}
	case err != nil:
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: edit it by hand", err)}
	}
	cmd, args, dash := t.cmd, t.args, t.dash
	el := args.elems
	orig := el[dash+1]
	edits := []edit{{cmd.start, cmd.end, string(b[orig.start:orig.end])}}
	added := t.labelEq && dash+2 == len(el)
	if added {
		var raw []string
		for _, e := range el {
			raw = append(raw, string(b[e.start:e.end]))
		}
		added = string(b[cmd.end:args.end]) == l.newArgs(strings.Join(raw, ", "))
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
