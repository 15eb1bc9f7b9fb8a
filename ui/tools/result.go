package tools

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/list"
)

// bodyCache holds the drawn body of the result shown, for one width: a
// result is laid out once, then View only slices it.
type bodyCache struct {
	r     *result
	w     int
	raw   bool
	lines []string
}

// maxErrLines bounds the lines of a failed call's error in the header.
const maxErrLines = 3

// header draws the fixed lines above the scrolled body.
func (m *Model) header(r *result, bodyLen int) []string {
	st := m.st
	id := "–"
	if r.ID.IsValid() {
		id = r.ID.String()
	}
	left := st.Accent.Render(textfmt.Clean(r.Tool)) + st.Subtle.Render(" · id ") + st.Text.Render(id) +
		st.Subtle.Render(" · ") + st.Text.Render(textfmt.Dur(r.Latency))
	if r.Err == nil && r.Result != nil && r.Result.IsError {
		left += st.Subtle.Render(" · ") + st.Error.Render("isError")
	}
	right := fmt.Sprintf("result %d/%d", m.cur+1, m.results.Len())
	if m.results.Evicted() > 0 {
		right += fmt.Sprintf(" (+%d dropped)", m.results.Evicted())
	}
	if age := m.age(r); age != "" {
		right += " · " + age
	}
	if h := m.bodyHeight(); bodyLen > h {
		right += fmt.Sprintf(" · %d-%d/%d", m.scroll+1, min(m.scroll+h, bodyLen), bodyLen)
	}
	right = st.Subtle.Render(right)
	rw := lipgloss.Width(right)
	out := []string{textfmt.Fit(left, max(m.w-rw-1, 0)) + " " + right}
	if r.Err != nil {
		lines := wrapText(r.Err.Error(), m.w)
		if len(lines) > maxErrLines {
			lines = append(lines[:maxErrLines-1:maxErrLines-1], "…")
		}
		for _, l := range lines {
			out = append(out, st.Error.Render(l))
		}
	}
	if m.note != "" {
		return append(out, textfmt.Fit(st.Accent.Render(m.note), m.w))
	}
	return append(out, st.Subtle.Render(strings.Repeat("─", m.w)))
}

// age says how long ago result r came: "just now", "3s ago" ("" without
// a clock).
func (m *Model) age(r *result) string {
	if r.at.IsZero() || m.now.IsZero() {
		return ""
	}
	if d := m.now.Sub(r.at); d >= time.Second {
		return textfmt.Dur(d.Truncate(time.Second)) + " ago"
	}
	return "just now"
}

func (m *Model) headerHeight(r *result) int {
	n := 2
	if r.Err != nil {
		n += min(len(wrapText(r.Err.Error(), m.w)), maxErrLines)
	}
	return n
}

// bodyHeight is the number of body lines the result view shows.
func (m *Model) bodyHeight() int {
	r := m.current()
	if r == nil {
		return m.h
	}
	return max(m.h-m.headerHeight(r), 1)
}

// body returns the drawn body of the result shown, from the cache.
func (m *Model) body() []string {
	r := m.current()
	if m.cache.r != r || m.cache.w != m.w || m.cache.raw != m.raw {
		m.cache = bodyCache{r: r, w: m.w, raw: m.raw, lines: m.drawBody(r, m.w)}
	}
	return m.cache.lines
}

func (m *Model) scrollBy(d int) {
	n := len(m.body())
	m.scroll = list.ClampTop(m.scroll+d, n, m.bodyHeight())
}

func (m *Model) resultView() string {
	r := m.current()
	body := m.body()
	h := m.bodyHeight()
	m.scroll = list.ClampTop(m.scroll, len(body), h)
	out := m.header(r, len(body))
	out = append(out, body[m.scroll:min(m.scroll+h, len(body))]...)
	return textfmt.Lines(strings.Join(out, "\n"), m.w, m.h)
}

// drawBody lays out a result: error data, content blocks,
// structuredContent; with the raw toggle on, the result as JSON.
func (m *Model) drawBody(r *result, w int) []string {
	if m.raw {
		return m.rawBody(r, w)
	}
	st := m.st
	var out []string
	var ce *client.Error
	if errors.As(r.Err, &ce) && ce.RPC != nil && len(ce.RPC.Data) > 0 {
		out = append(out, st.Header.Render("error data"))
		out = append(out, jsonLines(st, ce.RPC.Data, w)...)
	}
	if r.Result == nil {
		if r.Err == nil && len(r.Raw) > 0 {
			out = append(out, st.Header.Render("result (not a CallToolResult)"))
			out = append(out, jsonLines(st, r.Raw, w)...)
		}
		return out
	}
	if len(r.Result.Content) == 0 {
		out = append(out, st.Subtle.Render("(no content)"))
	}
	for i, c := range r.Result.Content {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, m.block(c, w, r.Result.IsError)...)
		if a := annotationLine(c.Annotations); a != "" {
			out = append(out, wrapStyled(st.Subtle, a, w)...)
		}
	}
	if sc := r.Result.StructuredContent; len(sc) > 0 && string(sc) != "null" {
		out = append(out, "", st.Header.Render("structuredContent"))
		out = append(out, jsonLines(st, sc, w)...)
	}
	return out
}

// block draws one content block; the text of a result with isError (the
// tool failed) is drawn as an error.
func (m *Model) block(c mcp.Content, w int, isError bool) []string {
	st := m.st
	switch c.Type {
	case "text":
		text, more := cut(c.Text)
		label, style := st.Subtle.Render("[text]"), st.Text
		if isError {
			label, style = st.Error.Render("[text · isError: the tool failed]"), st.Error
		}
		out := []string{label}
		for _, l := range wrapText(text, w) {
			out = append(out, style.Render(l))
		}
		if more != "" {
			out = append(out, st.Subtle.Render(more))
		}
		return out
	case "image", "audio":
		return []string{st.Info.Render(fmt.Sprintf("[%s %s, %s]", c.Type, textfmt.Clean(c.MimeType), textfmt.Size(decodedLen(c.Data))))}
	case "resource_link":
		return []string{st.Info.Render("[resource_link " + textfmt.Clean(c.URI) + "]")}
	}
	name := c.Type
	if name == "" {
		name = "block without a type"
	}
	return []string{st.Info.Render("[" + textfmt.Clean(name) + "]")}
}

// decodedLen is the byte size of base64 data.
func decodedLen(s string) int {
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodedLen(len(s))
}

// rawBody is the raw toggle's body: the result object as received,
// indented, or the error (its JSON-RPC error object when the server sent
// one).
func (m *Model) rawBody(r *result, w int) []string {
	st := m.st
	var ce *client.Error
	switch {
	case errors.As(r.Err, &ce) && ce.RPC != nil:
		raw, err := json.Marshal(ce.RPC)
		if err == nil {
			return append([]string{st.Header.Render("error (raw JSON)")}, jsonLines(st, raw, w)...)
		}
	case r.Err != nil:
		return []string{st.Subtle.Render("no result: the call failed (the error is above)")}
	case len(r.Raw) > 0:
		return append([]string{st.Header.Render("result (raw JSON)")}, jsonLines(st, r.Raw, w)...)
	case r.Result != nil:
		raw, err := json.Marshal(r.Result)
		if err == nil {
			return append([]string{st.Header.Render("result (re-encoded: the raw bytes were not kept)")}, jsonLines(st, raw, w)...)
		}
	}
	return []string{st.Subtle.Render("(no result)")}
}

// wrapStyled wraps text to w and renders each line with style s.
func wrapStyled(s lipgloss.Style, text string, w int) []string {
	lines := wrapText(text, w)
	for i := range lines {
		lines[i] = s.Render(lines[i])
	}
	return lines
}
