package answer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/internal/textfmt"
)

// Title names the dialog for its border: what is asked and the request id.
func (d *Dialog) Title() string {
	what := map[Kind]string{Sampling: "Sampling", Form: "Elicitation", URL: "Elicitation (URL)"}[d.kind]
	return fmt.Sprintf("%s request from the server · id %s", what, d.req.ID)
}

// View draws the dialog in the size given to SetSize.
func (d *Dialog) View() string {
	var lines []string
	if d.bad != "" {
		lines = append(lines, d.st.Error.Render("✗ "+textfmt.Clean(d.bad)))
	}
	switch d.kind {
	case Sampling:
		lines = append(lines, d.samplingLines()...)
		lines = append(lines, d.st.Accent.Render("your answer (role assistant)"))
		lines = append(lines, d.text.View())
		model := d.st.Text.Render("model: ")
		if d.onModel {
			model = d.st.Accent.Render("model: ")
		}
		lines = append(lines, model+d.model.View())
	case Form:
		lines = append(lines, d.form.View())
	case URL:
		lines = append(lines, d.urlLines()...)
	}
	return textfmt.Lines(strings.Join(lines, "\n"), d.w, d.h)
}

// samplingHeader counts the lines above the answer.
func (d *Dialog) samplingHeader() int { return len(d.samplingLines()) }

// samplingLines show what the server asks: the system prompt, each
// message (text, or the type of other content), and the limits.
func (d *Dialog) samplingLines() []string {
	st, p := d.st, d.sampling
	// The messages get at most half of the dialog; the answer the rest.
	room := max(d.h/2, 3)
	var out []string
	if p.SystemPrompt != "" {
		out = append(out, st.Subtle.Render("system: ")+textfmt.Clean(p.SystemPrompt))
	}
	for _, m := range p.Messages {
		out = append(out, st.Key.Render(textfmt.Clean(m.Role)+": ")+textfmt.Clean(contentText(m.Content)))
	}
	if len(out) > room-1 {
		n := len(out) - (room - 2)
		out = append([]string{st.Subtle.Render(fmt.Sprintf("… %d earlier line(s)", n))}, out[n:]...)
	}
	limits := "maxTokens " + fmt.Sprint(p.MaxTokens)
	if len(p.ModelPreferences) > 0 {
		limits += " · modelPreferences " + textfmt.Clean(string(p.ModelPreferences))
	}
	return append(out, st.Subtle.Render(limits))
}

// contentText renders one content block, or an array of them, as text.
func contentText(raw json.RawMessage) string {
	var blocks []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MimeType string `json:"mimeType"`
	}
	if len(raw) > 0 && raw[0] != '[' {
		raw = append(append(json.RawMessage{'['}, raw...), ']')
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+" "+b.MimeType+"]")
		}
	}
	return strings.Join(parts, " ")
}

func (d *Dialog) urlLines() []string {
	st, p := d.st, d.elicit
	return []string{
		textfmt.Clean(p.Message),
		"",
		st.Subtle.Render("open in a browser:"),
		st.Accent.Render(textfmt.Clean(p.URL)),
		"",
		st.Subtle.Render("host " + textfmt.Clean(hostOf(p.URL)) + " · elicitation id " + textfmt.Clean(p.ElicitationID)),
		st.Subtle.Render("sonde does not open URLs: open it yourself (y copies it), then accept"),
	}
}
