package form

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/ui/list"
)

// maxIssueLines bounds the problems listed above the fields or under the
// editor.
const maxIssueLines = 4

func (f *Form) issueLines() int { return min(len(f.issues), maxIssueLines) }

// headerLines counts the lines above the fields (or the editor).
func (f *Form) headerLines() int {
	n := 1 + len(f.warnings)
	if f.tool.Description != "" {
		n++
	}
	if f.mode == ModeFields {
		n += f.issueLines()
		if len(f.extraNames) > 0 {
			n++
		}
	}
	return n
}

func (f *Form) labelWidth() int {
	lw := 4
	for _, fl := range f.fields {
		lw = max(lw, utf8.RuneCountInString(fl.prop.Name)+2)
	}
	return min(lw, max(f.w/3, 4))
}

// layout sizes the inputs and the editor and keeps the focused field shown.
func (f *Form) layout() {
	if f.w <= 0 || f.h <= 0 {
		return
	}
	iw := max(f.w-2-f.labelWidth()-2, 1) // the cursor takes one more cell
	for i := range f.fields {
		if f.fields[i].kind != kindChoice {
			f.fields[i].input.SetWidth(iw)
		}
	}
	f.editor.SetWidth(f.w)
	f.editor.SetHeight(max(f.h-f.headerLines()-f.issueLines(), 1))
	shown := max((f.h-f.headerLines())/2, 1)
	f.top = list.Scroll(f.top, f.focus, len(f.fields), shown)
}

// View draws the form in exactly the size given to SetSize.
func (f *Form) View() string {
	st := f.st
	mode := "fields"
	if f.mode == ModeJSON {
		mode = "JSON"
	}
	verb := "call"
	if f.verb != "" {
		verb = f.verb
	}
	lines := []string{st.Accent.Render(verb+" "+textfmt.Clean(f.tool.Name)) + st.Subtle.Render(" · "+mode)}
	if d := f.tool.Description; d != "" {
		lines = append(lines, st.Subtle.Render(textfmt.Clean(d)))
	}
	for _, w := range f.warnings {
		lines = append(lines, st.Warn.Render("! "+textfmt.Clean(w)))
	}
	issues := make([]string, 0, f.issueLines())
	for i, is := range f.issues {
		if i == maxIssueLines-1 && len(f.issues) > maxIssueLines {
			issues = append(issues, st.Error.Render(fmt.Sprintf("✗ … %d more", len(f.issues)-i)))
			break
		}
		msg := is.Msg
		if is.Field != "" {
			msg = is.Field + ": " + msg
		}
		issues = append(issues, st.Error.Render("✗ "+textfmt.Clean(msg)))
	}
	if f.mode == ModeJSON {
		lines = append(lines, f.editor.View())
		lines = append(lines, issues...)
		return textfmt.Lines(strings.Join(lines, "\n"), f.w, f.h)
	}
	lines = append(lines, issues...)
	if len(f.extraNames) > 0 {
		lines = append(lines, st.Subtle.Render(fmt.Sprintf("+ %d more key(s) from JSON: %s (ctrl+e to edit)",
			len(f.extraNames), textfmt.Clean(strings.Join(f.extraNames, ", ")))))
	}
	if len(f.fields) == 0 {
		lines = append(lines, st.Subtle.Render("no arguments · enter to "+verb))
	}
	lw := f.labelWidth()
	for i := f.top; i < len(f.fields) && len(lines) < f.h; i++ {
		lines = append(lines, f.fieldView(i, lw)...)
	}
	return textfmt.Lines(strings.Join(lines, "\n"), f.w, f.h)
}

// fieldView draws a field on two lines: marker, label and widget; then its
// error or its description.
func (f *Form) fieldView(i, lw int) []string {
	st, fl := f.st, &f.fields[i]
	marker := "  "
	if i == f.focus {
		marker = st.Accent.Render("› ")
	}
	label := textfmt.Clean(fl.prop.Name)
	if fl.prop.Required {
		label += "*"
	}
	labelStyle := st.Text
	if i == f.focus {
		labelStyle = st.Accent
	}
	var widget string
	switch {
	case fl.kind != kindChoice:
		widget = fl.input.View()
	case fl.choices[fl.choice] == nil:
		widget = st.Subtle.Render("‹ unset ›")
	case fl.isBool():
		widget = "[ ] false"
		if string(fl.choices[fl.choice]) == "true" {
			widget = "[x] true"
		}
	default:
		widget = "‹ " + textfmt.Clean(fl.choiceLabel()) + " ›" +
			st.Subtle.Render(fmt.Sprintf(" %d/%d", fl.choice+1-fl.unset(), len(fl.prop.Enum)))
	}
	line := marker + labelStyle.Render(textfmt.Fit(label, lw)) + " " + widget
	under := strings.Repeat(" ", 2+lw+1)
	switch {
	case fl.err != "":
		under += st.Error.Render("✗ " + textfmt.Clean(fl.err))
	case len(fl.prop.Items) > 0:
		under += st.Subtle.Render(textfmt.Clean(itemsHint(fl.prop)))
	case fl.prop.Description != "":
		under += st.Subtle.Render(textfmt.Clean(fl.prop.Description))
	default:
		under += st.Subtle.Render(fl.prop.Type)
	}
	return []string{line, under}
}
