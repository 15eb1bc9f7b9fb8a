package tools

import (
	"bytes"
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// CallLine is the `sonde call` command line that makes the call of tool
// with args again, against the server target names (the arguments of
// sonde call that reach it: "--" and the server's command line, or --url
// URL …). Every word is quoted for a POSIX shell where it needs to be. Empty
// args, or {}, give no --args.
func CallLine(tool string, args json.RawMessage, target []string) string {
	words := []string{"sonde", "call", tool}
	if a := compactJSON(args); a != "" && a != "{}" {
		words = append(words, "--args", a)
	}
	words = append(words, target...)
	for i, w := range words {
		words[i] = ShellQuote(w)
	}
	return strings.Join(words, " ")
}

// compactJSON is args on one line (as given when it is not JSON).
func compactJSON(args json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return string(args)
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell: as it is when every byte is one a
// shell leaves alone, else in single quotes, a quote inside it ending
// them, escaped with a backslash, and opening them again.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("@%+=:,./_-", c) >= 0) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// copyCall is Y: the call of the result shown, or the last call of the
// selected tool, to the clipboard as a sonde call command line (OSC 52).
// The pane's note says what was copied, or why nothing was.
func (m *Model) copyCall() tea.Cmd {
	tool, args, ok := m.callToCopy()
	switch {
	case !ok:
		return nil
	case m.callTarget == nil:
		m.note = "no sonde call line for this session (its server is not one sonde call reaches)"
		return nil
	}
	line := CallLine(tool, args, m.callTarget)
	m.note = "copied to the clipboard: " + textfmt.Clean(line)
	return tea.SetClipboard(line)
}

// callToCopy is the call Y copies: the result's in the result view, the
// selected tool's last one in the list.
func (m *Model) callToCopy() (tool string, args json.RawMessage, ok bool) {
	switch m.mode {
	case modeResult:
		if r := m.current(); r != nil {
			return r.Tool, r.Args, true
		}
	case modeList:
		if e := m.selected(); e != nil && e.start == "" {
			a, called := m.lastArgs[e.tool.Name]
			return e.tool.Name, a, called
		}
	}
	return "", nil, false
}
