package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// ErrNotAllowed is the error of a session_start that names something sonde
// mcp may not launch or reach.
var ErrNotAllowed = errors.New("not allowed")

// startIn is session_start's input.
type startIn struct {
	Command string   `json:"command,omitempty" jsonschema:"the server's command; with no args, the whole command line (split into words as a shell would, never run through one). It must be, word for word, a command line given to sonde mcp with --allow"`
	Args    []string `json:"args,omitempty" jsonschema:"the command's arguments, one word each"`
	URL     string   `json:"url,omitempty" jsonschema:"instead of a command: the MCP server's URL (Streamable HTTP, or legacy HTTP+SSE); loopback URLs, and URLs given with --allow"`
	Server  string   `json:"server,omitempty" jsonschema:"instead of a command: a server of the host config files (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Cline), by name"`
}

// launch checks in against the allow list and the configured servers and
// returns what to open, with a label for people.
func (s *Server) launch(in startIn) (Launch, string, error) {
	given := 0
	for _, set := range []bool{in.Command != "", in.URL != "", in.Server != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return Launch{}, "", errors.New("give exactly one of command (with args), url or server")
	}
	if len(in.Args) > 0 && in.Command == "" {
		return Launch{}, "", errors.New("args need a command")
	}
	switch {
	case in.Server != "":
		return s.launchServer(in.Server)
	case in.URL != "":
		return s.launchURL(in.URL)
	}
	argv := append([]string{in.Command}, in.Args...)
	if len(in.Args) == 0 {
		words, err := SplitWords(in.Command)
		if err != nil || len(words) == 0 {
			return Launch{}, "", fmt.Errorf("command %q does not split into words (%v): give the command alone and its arguments in args", in.Command, err)
		}
		argv = words
	}
	if !s.allow.allows(argv) {
		return Launch{}, "", s.refusal(argv)
	}
	return Launch{Argv: argv}, QuoteWords(argv), nil
}

func (s *Server) launchServer(name string) (Launch, string, error) {
	var names []string
	if s.opts.Hosts != nil {
		names = s.opts.Hosts.Names()
	}
	if !slices.Contains(names, name) {
		known := "none are configured"
		if len(names) > 0 {
			known = "configured: " + strings.Join(names, ", ")
		}
		return Launch{}, "", fmt.Errorf("%w: no server %q in the host config files (%s; sonde config list shows them)", ErrNotAllowed, name, known)
	}
	return Launch{Server: name}, "server " + name, nil
}

func (s *Server) launchURL(raw string) (Launch, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Launch{}, "", fmt.Errorf("url %q is not an http(s) URL", raw)
	}
	if !loopbackHost(u.Hostname()) && !s.allow.allows([]string{raw}) {
		return Launch{}, "", fmt.Errorf("%w: %s is not a loopback address; to let sessions reach it, add --allow %s to sonde mcp's command line", ErrNotAllowed, raw, QuoteWords([]string{raw}))
	}
	return Launch{URL: raw}, raw, nil
}

// loopbackHost reports whether host is localhost or a loopback IP.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refusal says why argv may not run, and how to allow it.
func (s *Server) refusal(argv []string) error {
	line := QuoteWords(argv)
	msg := fmt.Sprintf("%v: sonde mcp launches only the command lines given to it with --allow (word for word) and the servers of the host configs by name; %s is neither. To allow it, add --allow %s to sonde mcp's command line (e.g. claude mcp add sonde -- sonde mcp --allow %s)",
		ErrNotAllowed, line, QuoteWords([]string{line}), QuoteWords([]string{line}))
	if len(s.allow.entries) > 0 {
		allowed := make([]string, len(s.allow.entries))
		for i, e := range s.allow.entries {
			allowed[i] = QuoteWords(e)
		}
		msg += "; allowed now: " + strings.Join(allowed, " | ")
	}
	return &refusedError{msg: msg}
}

// refusedError is a refusal: errors.Is(err, ErrNotAllowed).
type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == ErrNotAllowed }

// QuoteWords writes argv as a shell would read it back (SplitWords):
// words with nothing special as they are, the others in single quotes.
func QuoteWords(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		out[i] = quoteWord(w)
	}
	return strings.Join(out, " ")
}

func quoteWord(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
