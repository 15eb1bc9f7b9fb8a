package diagram

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// maxLabel bounds an arrow's label in runes.
const maxLabel = 72

// Mermaid writes the diagram as a Mermaid sequenceDiagram: participant C
// is the client (Client), S the server, and I sonde when it injected
// requests into a host's session. Requests are solid arrows, responses
// dotted, notifications open (async) arrows, lines that are not messages
// crosses.
func (b *Builder) Mermaid(w io.Writer) error {
	var sb strings.Builder
	sb.WriteString("sequenceDiagram\n")
	fmt.Fprintf(&sb, "    participant C as %s\n", MermaidText(b.Client()))
	if b.Injected() {
		sb.WriteString("    participant I as sonde\n")
	}
	fmt.Fprintf(&sb, "    participant S as %s\n", MermaidText(b.server))
	if b.o.From.Set || b.o.To.Set {
		fmt.Fprintf(&sb, "    Note over C,S: %s\n", MermaidText(b.windowText()))
	}
	for _, s := range b.steps {
		label := MermaidText(cut(s.label))
		c := "C"
		if s.injected {
			c = "I"
		}
		if s.note {
			where := [...]string{overBoth: "over C,S", leftOfClient: "left of " + c, rightOfServer: "right of S"}[s.side]
			fmt.Fprintf(&sb, "    Note %s: %s\n", where, label)
			continue
		}
		from, to := c, "S"
		if s.dir == client.In {
			from, to = "S", c
		}
		arrow := [...]string{styleRequest: "->>", styleReply: "-->>", styleNotify: "-)", styleBad: "--x"}[s.style]
		fmt.Fprintf(&sb, "    %s%s%s: %s\n", from, arrow, to, label)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// windowText describes the window: its bounds and the events it holds.
func (b *Builder) windowText() string {
	s := "window from " + boundText(b.o.From, "the start") + " to " + boundText(b.o.To, "the end")
	if b.first == 0 {
		return s + ": no events"
	}
	return s + ": events " + strconv.FormatUint(b.first, 10) + " to " + strconv.FormatUint(b.last, 10)
}

// boundText is a bound in words: "event 12", "+1.5s", "the end".
func boundText(b Bound, open string) string {
	switch {
	case !b.Set:
		return open
	case b.IsSeq:
		return "event " + strconv.FormatUint(b.Seq, 10)
	}
	return "+" + b.Time.String()
}

// MermaidText makes text safe as a Mermaid message, note or participant
// name: # and ; (which end or escape a message), < > and & (read as
// markup) become Mermaid's entity code #N; (decimal); control characters
// and invalid UTF-8 become #65533; (U+FFFD). Everything else stays, and the
// result is one line.
func MermaidText(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ':
			sb.WriteString("#65533;")
		case strings.ContainsRune("#;<>&", r):
			sb.WriteString("#" + strconv.Itoa(int(r)) + ";")
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// cut shortens a label to maxLabel runes.
func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxLabel {
		return s
	}
	r := []rune(s)
	return string(r[:maxLabel-1]) + "…"
}

// Text writes the diagram as a plain-text swimlane width cells wide (at
// least 40): a time column, the client's lane on the left, the server's on
// the right, one line per arrow or note. sonde's own lane, when it
// injected requests into a host's session, starts a few cells right of
// the host's: its arrows start there.
func (b *Builder) Text(w io.Writer, width int) error {
	width = max(width, 40)
	const timeCol = 10
	inner := width - timeCol - 2 // between the two lane bars
	sub := 0                     // sonde's lane, from the client's
	if b.Injected() {
		sub = min(16, inner/5)
	}
	var sb strings.Builder
	// The client's name over its lane (and sonde's over its own), the
	// server's ending over its own.
	name, cname := textfmt.Escape(b.server), textfmt.Escape(b.Client())
	head := textfmt.Fit("time", timeCol-1) + " " + cname
	if sub > 0 {
		head = textfmt.Fit(head, timeCol+1+sub) + "sonde"
	}
	gap := max(width-utf8.RuneCountInString(head)-utf8.RuneCountInString(name), 1)
	head += strings.Repeat(" ", gap) + name
	sb.WriteString(head + "\n")
	if b.o.From.Set || b.o.To.Set {
		sb.WriteString(strings.Repeat(" ", timeCol) + "│" + textfmt.Fit(" · "+b.windowText(), inner) + "│\n")
	}
	for _, s := range b.steps {
		at := "+" + textfmt.Dur(s.at)
		if s.at == 0 {
			at = "+0"
		}
		lane := textLane(s, inner)
		if s.injected && sub > 0 {
			lane = strings.Repeat(" ", sub-1) + "│" + textLane(s, inner-sub)
		}
		sb.WriteString(fmt.Sprintf("%*s ", timeCol-1, at) + "│" + lane + "│\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// textLane draws one step between the lanes, exactly inner cells wide.
func textLane(s step, inner int) string {
	label := textfmt.Escape(cut(s.label))
	if s.note {
		prefix := [...]string{overBoth: " ⋯ ", leftOfClient: " ◆ ", rightOfServer: " ◆ "}[s.side]
		if s.side == rightOfServer {
			return textfmt.Fit(strings.Repeat(" ", max(inner-utf8.RuneCountInString(label)-3, 0))+label+prefix, inner)
		}
		return textfmt.Fit(prefix+label, inner)
	}
	line := [...]string{styleRequest: "─", styleReply: "╌", styleNotify: "─", styleBad: "─"}[s.style]
	head := [...]string{styleRequest: "▶", styleReply: "▶", styleNotify: "▷", styleBad: "✕"}[s.style]
	tail := [...]string{styleRequest: "◀", styleReply: "◀", styleNotify: "◁", styleBad: "✕"}[s.style]
	room := inner - 6
	if w := textfmt.Fit(label, room); utf8.RuneCountInString(label) > room {
		label = strings.TrimRight(w, " ")
	}
	fill := max(inner-3-utf8.RuneCountInString(label), 1)
	if s.dir == client.Out {
		return textfmt.Fit(line+" "+label+" "+strings.Repeat(line, fill-1)+head, inner)
	}
	return textfmt.Fit(tail+strings.Repeat(line, fill-1)+" "+label+" "+line, inner)
}
