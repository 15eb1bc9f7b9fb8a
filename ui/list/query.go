package list

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sonde-mcp/sonde/filter"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Query is a pane's `/` filter in the filter language (docs/filter.md):
// the text, its parsed Filter (nil while the text is empty or wrong), the
// mistake, and the input while it is typed.
type Query struct {
	Text   string
	Filter *filter.Filter
	Err    string
	Typing bool
	input  textinput.Model
}

// NewQuery returns an empty query.
func NewQuery() Query {
	in := textinput.New()
	in.Prompt = "/ "
	in.SetStyles(textinput.DefaultStyles(true))
	return Query{input: in}
}

// Active reports whether there is a query (rows are filtered).
func (q *Query) Active() bool { return q.Text != "" }

// Match reports whether it passes the query; nothing passes a query with
// a mistake.
func (q *Query) Match(it *filter.Item) bool {
	if !q.Active() {
		return true
	}
	return q.Filter != nil && q.Filter.Match(it)
}

// Set replaces the text and parses it.
func (q *Query) Set(text string) {
	q.Text, q.Filter, q.Err = text, nil, ""
	if f, err := filter.Parse(text); err != nil {
		q.Err = err.Error()
	} else {
		q.Filter = f
	}
}

// SetWidth sets the input's width for a pane w cells wide.
func (q *Query) SetWidth(w int) { q.input.SetWidth(max(w-24, 8)) }

// Open starts typing, from the current text.
func (q *Query) Open() tea.Cmd {
	q.Typing = true
	q.input.SetValue(q.Text)
	q.input.CursorEnd()
	return q.input.Focus()
}

// Key handles a key while typing: accept keeps the query, clear drops it,
// anything else edits it. changed reports whether the text changed.
func (q *Query) Key(msg tea.KeyPressMsg, accept, clear key.Binding) (changed bool, cmd tea.Cmd) {
	switch {
	case key.Matches(msg, clear):
		q.Typing = false
		q.input.Blur()
		q.input.SetValue("")
		q.Set("")
		return true, nil
	case key.Matches(msg, accept):
		q.Typing = false
		q.input.Blur()
		return false, nil
	}
	q.input, cmd = q.input.Update(msg)
	if v := q.input.Value(); v != q.Text {
		q.Set(v)
		return true, cmd
	}
	return false, cmd
}

// Bar is the query's line, w cells: the text being typed (or kept), a
// mistake in it, and what count says matches.
func (q *Query) Bar(st *theme.Styles, w int, count string) string {
	left := st.Accent.Render("/ ") + st.Text.Render(textfmt.Escape(q.Text))
	if q.Typing {
		left = q.input.View()
	}
	right := st.Subtle.Render(count + " · esc clears")
	if q.Err != "" {
		right = st.Error.Render(strings.TrimPrefix(q.Err, "filter: ")) + " " + right
	}
	lw := max(w-lipgloss.Width(right)-1, 0)
	return textfmt.Fit(textfmt.Fit(left, lw)+" "+right, w)
}
