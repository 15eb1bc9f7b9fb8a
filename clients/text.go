package clients

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Row is one behaviour of the table: its label and each host's cell, a
// line or more (unescaped: the writers escape them).
type Row struct {
	Label string
	Cells [][]string
}

// Labels of the rows, in their order (docs/clients.md explains each).
var Labels = []string{"sessions", "revision", "opens with", "capabilities", "re-fetch in TTL", "trace context", "progress tokens", "parallel calls", "retries"}

// Header is a host's column heading: its name and its version.
func (h Host) Header() []string {
	name, version := h.Name, h.Version
	if name == "" {
		name = "(no clientInfo)"
	}
	if version == "" {
		version = "-"
	}
	return []string{name, version}
}

// Cells are the host's cells, one per label.
func (h Host) Cells() [][]string {
	return [][]string{
		{fmt.Sprint(len(h.Sources))},
		orNone(h.Revisions, "none asked"),
		opensCell(h.Opens),
		orNone(shortCaps(h.Capabilities), "none"),
		h.refetchCell(),
		ofRequests(h.Traced, h.Requests),
		ofRequests(h.Progress, h.Requests),
		h.parallelCell(),
		h.retryCell(),
	}
}

func (h Host) refetchCell() []string {
	switch {
	case h.Refetches > 0:
		return []string{fmt.Sprintf("yes, %d (%d cached)", h.Refetches, h.Cached)}
	case h.Cached == 0:
		return []string{"no ttlMs seen"}
	}
	return []string{fmt.Sprintf("no (%d cached)", h.Cached)}
}

func (h Host) parallelCell() []string {
	if h.MaxInFlight > 1 {
		return []string{fmt.Sprintf("yes, up to %d", h.MaxInFlight)}
	}
	return []string{"no"}
}

func (h Host) retryCell() []string {
	if h.Retries == 0 {
		return []string{"no"}
	}
	var out []string
	if h.Cancelled > 0 {
		out = append(out, fmt.Sprintf("%d after cancel", h.Cancelled))
	}
	if n := h.Retries - h.Cancelled; n > 0 {
		out = append(out, fmt.Sprintf("%d unanswered", n))
	}
	return out
}

// shortCaps are capability names as the table shows them: an extension as
// "ext NAME", of the official namespace by its short name ("ext tasks").
func shortCaps(caps []string) []string {
	out := make([]string, len(caps))
	for i, c := range caps {
		if name, ok := strings.CutPrefix(c, "extensions."); ok {
			c = "ext " + strings.TrimPrefix(name, "io.modelcontextprotocol/")
		}
		out[i] = c
	}
	return out
}

// opensCell is each opening on a line, a fallback on two.
func opensCell(opens []string) []string {
	var out []string
	for _, o := range opens {
		if first, then, ok := strings.Cut(o, ", then "); ok {
			out = append(out, first+",", "then "+then)
			continue
		}
		out = append(out, o)
	}
	return orNone(out, "-")
}

// ofRequests is "no" or "N of M requests".
func ofRequests(n, of int) []string {
	if n == 0 {
		return []string{"no"}
	}
	return []string{fmt.Sprintf("%d of %d requests", n, of)}
}

func orNone(list []string, none string) []string {
	if len(list) == 0 {
		return []string{none}
	}
	return list
}

// Rows are the table's rows for hosts.
func Rows(hosts []Host) []Row {
	rows := make([]Row, len(Labels))
	for i, l := range Labels {
		rows[i].Label = l
	}
	for _, h := range hosts {
		for i, c := range h.Cells() {
			rows[i].Cells = append(rows[i].Cells, c)
		}
	}
	return rows
}

// Column widths of the text table.
const (
	labelWidth = 16
	gap        = 2
	minCol     = 12
	maxCol     = 30
)

// WriteText writes the table, hosts as columns, in as many blocks of
// columns as width (in cells) needs; a cell too long for its column is cut.
func WriteText(w io.Writer, hosts []Host, width int) error {
	bw := bufio.NewWriter(w)
	if len(hosts) == 0 {
		fmt.Fprintln(bw, "no tapped sessions with host requests (sonde tap records them: see sonde tap --help)")
		return bw.Flush()
	}
	rows := Rows(hosts)
	widths := make([]int, len(hosts))
	heads := make([][]string, len(hosts))
	for i, h := range hosts {
		heads[i] = h.Header()
		widths[i] = colWidth(heads[i], rows, i, width)
	}
	for start := 0; start < len(hosts); {
		end, used := start, labelWidth
		for end < len(hosts) && (end == start || used+gap+widths[end] <= width) {
			used += gap + widths[end]
			end++
		}
		if start > 0 {
			fmt.Fprintln(bw)
		}
		block := func(label string, cells [][]string) {
			writeLines(bw, label, cells[start:end], widths[start:end])
		}
		block("", heads)
		for _, r := range rows {
			block(r.Label, r.Cells)
		}
		start = end
	}
	return bw.Flush()
}

// colWidth is host i's column width: its longest line, within bounds.
func colWidth(head []string, rows []Row, i, width int) int {
	n := 0
	for _, l := range head {
		n = max(n, cells(l))
	}
	for _, r := range rows {
		for _, l := range r.Cells[i] {
			n = max(n, cells(l))
		}
	}
	return max(minCol, min(n, maxCol, width-labelWidth-gap))
}

// cells is the width of a line as the table shows it (escaped).
func cells(s string) int { return utf8.RuneCountInString(textfmt.Escape(s)) }

// writeLines writes one row: the label beside the first line, each cell's
// lines below one another, trailing spaces left out.
func writeLines(w io.Writer, label string, cols [][]string, widths []int) {
	n := 1
	for _, c := range cols {
		n = max(n, len(c))
	}
	for line := range n {
		var b strings.Builder
		if line == 0 {
			b.WriteString(textfmt.Fit(label, labelWidth))
		} else {
			b.WriteString(strings.Repeat(" ", labelWidth))
		}
		for i, c := range cols {
			b.WriteString(strings.Repeat(" ", gap))
			text := ""
			if line < len(c) {
				text = textfmt.Escape(c[line])
			}
			b.WriteString(textfmt.Fit(text, widths[i]))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// WriteMarkdown writes the table as GitHub Markdown: a column per host, a
// cell's lines joined by <br>.
func WriteMarkdown(w io.Writer, hosts []Host) error {
	bw := bufio.NewWriter(w)
	head := []string{"behaviour"}
	for _, h := range hosts {
		hd := h.Header()
		head = append(head, mdCell([]string{hd[0] + " " + hd[1]}))
	}
	fmt.Fprintln(bw, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(bw, "|"+strings.Repeat("---|", len(head)))
	for _, r := range Rows(hosts) {
		line := []string{r.Label}
		for _, c := range r.Cells {
			line = append(line, mdCell(c))
		}
		fmt.Fprintln(bw, "| "+strings.Join(line, " | ")+" |")
	}
	return bw.Flush()
}

// mdCell is a cell's lines escaped for a Markdown table.
func mdCell(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = textfmt.Escape(l)
		l = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "`", "\\`").Replace(l)
		out[i] = l
	}
	return strings.Join(out, "<br>")
}
