package hostconfig

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// ErrNoEdit: sonde wrap cannot edit this host's file (the entry is to be
// edited by hand).
var ErrNoEdit = errors.New("cannot edit")

// argsElems returns the elements of an args span (none for nil).
func argsElems(args *span) []*span {
	if args == nil {
		return nil
	}
	return args.elems
}

// wrapArgv wraps an entry whose "command" is an array of the program and
// its arguments (opencode): sonde, "tap", WrapMarker, "--label", NAME and
// "--" go in front of its elements.
func wrapArgv(b []byte, entry *span, s Server, o WrapOptions, l lang) WrapChange {
	cmd := entry.member("command")
	if cmd == nil || cmd.kind != '[' || len(cmd.elems) == 0 {
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: \"command\" is not an array of strings", ErrShape)}
	}
	if c, _ := l.str(b, cmd.elems[0]); isSonde(c, o) && len(cmd.elems) > 1 {
		if v, _ := l.str(b, cmd.elems[1]); v == "tap" {
			return WrapChange{State: AlreadyWrapped}
		}
	}
	text := jsonString(o.Sonde) + `, "tap", ` + jsonString(WrapMarker) + `, "--label", ` + jsonString(s.Name) + `, "--", `
	at := cmd.elems[0].start
	return WrapChange{State: Wrapped, edits: []edit{{at, at, text}}}
}

// unwrapArgv gives back an entry wrapArgv changed: the elements before
// the server's program go.
func unwrapArgv(b []byte, entry *span, o WrapOptions, l lang) WrapChange {
	cmd := entry.member("command")
	if cmd == nil || cmd.kind != '[' || len(cmd.elems) < 2 {
		return WrapChange{State: NotWrapped}
	}
	c, _ := l.str(b, cmd.elems[0])
	if v, _ := l.str(b, cmd.elems[1]); !isSonde(c, o) || v != "tap" {
		return WrapChange{State: NotWrapped}
	}
	el := cmd.elems[1:]
	dash, marked, _, err := readTapFlags(b, el, o, l)
	switch {
	case o.All && !marked:
		return WrapChange{State: NotMarked}
	case err != nil:
		return WrapChange{State: Skipped, Err: fmt.Errorf("%w: edit it by hand", err)}
	}
	return WrapChange{State: Unwrapped, edits: []edit{{cmd.elems[0].start, el[dash+1].start, ""}}}
}

// tomlLang is the syntax of TOML files, for an entry whose missing "args"
// goes after sep and prefix (a new line and the entry's dotted-key
// prefix, or ", " in an inline table).
func tomlLang(sep, prefix string) lang {
	return lang{
		str: func(b []byte, s *span) (string, bool) {
			if s == nil || s.kind != '"' || s.start < 0 {
				return "", false
			}
			return tomlString(b[s.start:s.end])
		},
		newArgs: func(items string) string { return sep + prefix + "args = [" + items + "]" },
	}
}

// tomlEntrySpans locates the server entries of a TOML file (Codex's
// config.toml), each as a span with its "command" and "args" members.
func tomlEntrySpans(b []byte, host string, scope paths.Scope, f format) ([]entrySpan, error) {
	servers, problems := Parse(b, "", host, scope, "")
	for _, p := range problems {
		if p.Server == "" {
			return nil, p.Err
		}
	}
	entries, err := tomlEntries(b, f.keys[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	var out []entrySpan
	for _, e := range entries {
		s, err := tomlServer(e.name, servers, problems)
		if errors.Is(err, errNotServer) {
			continue
		}
		obj := &span{kind: '{'}
		if e.cmd != nil {
			obj.members = append(obj.members, spanMember{"command", e.cmd})
		}
		if e.args != nil {
			obj.members = append(obj.members, spanMember{"args", e.args})
		}
		s.Name = e.name
		out = append(out, entrySpan{server: s, span: obj, err: err, lang: tomlLang(e.sep, e.prefix)})
	}
	return out, nil
}

// tomlServer is what Parse read of the entry name, or the problem it had.
func tomlServer(name string, servers []Server, problems []Problem) (Server, error) {
	for _, s := range servers {
		if s.Name == name {
			return s, nil
		}
	}
	for _, p := range problems {
		if p.Server == name {
			return Server{}, p.Err
		}
	}
	return Server{}, errNotServer
}

// verifyEdits reads the edited file out again and checks that each entry
// changed launches what the change says (a TOML or YAML edit is made on
// the text: this is the proof that it means what was meant). A file
// whose edit does not check is not written.
func verifyEdits(out []byte, host string, scope paths.Scope, o WrapOptions, entries []entrySpan, changes []WrapChange) error {
	after, problems := Parse(out, "", host, scope, o.Project)
	for _, p := range problems {
		if p.Server == "" {
			return fmt.Errorf("%w: the edited file would not read: %v", ErrNoEdit, p.Err)
		}
	}
	for _, c := range changes {
		if c.State != Wrapped && c.State != Unwrapped {
			continue
		}
		var before Server
		for _, e := range entries {
			if e.server.Name == c.Server {
				before = e.server
			}
		}
		now, err := tomlServer(c.Server, after, problems)
		outer, inner := now, before
		if c.State == Wrapped {
			outer, inner = before, now
		}
		// inner launches sonde tap in front of outer's command and args.
		argv := append([]string{outer.Command}, outer.Args...)
		if err != nil || !isSonde(inner.Command, o) || len(inner.Args) < len(argv)+2 || inner.Args[0] != "tap" ||
			!slices.Equal(inner.Args[len(inner.Args)-len(argv):], argv) || inner.Args[len(inner.Args)-len(argv)-1] != "--" {
			return fmt.Errorf("%w: server %q: the edit would not mean what sonde wrap meant: edit it by hand", ErrNoEdit, c.Server)
		}
	}
	return nil
}
