package features

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/list"
)

// Update handles keys, the mouse wheel, and the results of what the pane
// asked for.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	defer m.syncKeys()
	if m.form != nil {
		if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, m.keys.Complete) {
			return m.complete()
		}
		switch msg.(type) {
		case tea.KeyPressMsg, tea.PasteMsg, tea.MouseClickMsg, tea.MouseWheelMsg:
			return m.formUpdate(msg)
		}
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseWheelMsg:
		if msg.Button == tea.MouseWheelDown {
			m.move(1)
		} else if msg.Button == tea.MouseWheelUp {
			m.move(-1)
		}
	case ReadResultMsg:
		m.busy = false
		m.showRead(msg)
	case PromptResultMsg:
		m.busy = false
		m.showPrompt(msg)
	case SubscribedMsg:
		switch {
		case msg.Err != nil:
			m.status = "subscribe " + msg.URI + ": " + msg.Err.Error()
		case msg.On:
			m.subscribed[msg.URI] = true
			m.status = "subscribed to " + msg.URI
		default:
			delete(m.subscribed, msg.URI)
			m.status = "unsubscribed from " + msg.URI
		}
	case LevelSetMsg:
		if msg.Err != nil {
			m.status = "logging/setLevel " + msg.Level + ": " + msg.Err.Error()
		} else {
			m.serverLvl = msg.Level
			m.status = "server log level set to " + msg.Level
		}
	case CompletionMsg:
		m.completed(msg)
	case SavedMsg:
		if msg.Err != nil {
			m.status = "save: " + msg.Err.Error()
		} else {
			m.status = "saved to " + msg.Path
		}
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	switch {
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.Home):
		m.move(-list.Far)
	case key.Matches(msg, k.End):
		m.move(list.Far)
	case key.Matches(msg, k.PageUp):
		m.scroll = max(m.scroll-max(m.h/2, 1), 0)
	case key.Matches(msg, k.PageDown):
		m.scroll = min(m.scroll+max(m.h/2, 1), max(len(m.detail)-1, 0))
	case key.Matches(msg, k.NextView):
		m.view = (m.view + 1) % viewCount
	case key.Matches(msg, k.PrevView):
		m.view = (m.view + viewCount - 1) % viewCount
	case key.Matches(msg, k.Resources):
		m.view = ViewResources
	case key.Matches(msg, k.Prompts):
		m.view = ViewPrompts
	case key.Matches(msg, k.Log):
		m.view = ViewLog
	case key.Matches(msg, k.Open):
		return m.open()
	case key.Matches(msg, k.Subscribe):
		it := m.selected()
		if it == nil || it.resource == nil {
			return nil
		}
		uri, on := it.resource.URI, !m.subscribed[it.resource.URI]
		return func() tea.Msg { return SubscribeMsg{URI: uri, On: on} }
	case key.Matches(msg, k.Save):
		if m.blob == nil {
			return nil
		}
		save := *m.blob
		return func() tea.Msg { return save }
	case key.Matches(msg, k.Refresh):
		m.refreshing = true
		return func() tea.Msg { return RefreshMsg{} }
	case key.Matches(msg, k.LevelUp):
		m.minLevel = min(m.minLevel+1, len(mcp.LogLevels)-1)
	case key.Matches(msg, k.LevelDown):
		m.minLevel = max(m.minLevel-1, 0)
	case key.Matches(msg, k.Logger):
		m.logger = nextLogger(m.loggers(), m.logger)
	case key.Matches(msg, k.SetLevel):
		level := mcp.LogLevels[m.minLevel]
		return func() tea.Msg { return SetLevelMsg{Level: level} }
	}
	return nil
}

// nextLogger cycles "" (all), then each logger seen.
func nextLogger(all []string, cur string) string {
	for i, l := range all {
		if l == cur {
			if i+1 < len(all) {
				return all[i+1]
			}
			return ""
		}
	}
	if len(all) > 0 && cur == "" {
		return all[0]
	}
	return ""
}

func (m *Model) move(d int) {
	if m.view == ViewLog {
		return
	}
	n := len(m.items(m.view))
	m.sel[m.view] = list.Clamp(m.sel[m.view]+d, n)
}

// open reads the selected resource, or opens the form of the selected
// template or prompt (a prompt without arguments is got at once).
func (m *Model) open() tea.Cmd {
	it := m.selected()
	if it == nil || m.busy {
		return nil
	}
	switch {
	case it.resource != nil:
		m.busy = true
		uri := it.resource.URI
		return func() tea.Msg { return ReadMsg{URI: uri} }
	case it.prompt != nil && len(it.prompt.Arguments) == 0:
		m.busy = true
		name := it.prompt.Name
		return func() tea.Msg { return GetPromptMsg{Name: name} }
	}
	m.formTarget, m.compl, m.status = *it, nil, ""
	m.form = form.New(m.st, m.formKeys, formTool(*it), nil)
	m.form.SetSize(m.w, max(m.h-1, 1))
	return nil
}

// formTool describes a template's variables, or a prompt's arguments, as a
// tool whose input schema is an object of strings, so the tool form can
// edit them: every template variable is required (an empty one expands to
// nothing), and a prompt's required arguments are.
func formTool(it item) mcp.Tool {
	props := map[string]any{}
	var required []string
	name, desc := "", ""
	switch {
	case it.template != nil:
		name, desc = it.template.URITemplate, it.template.Description
		for _, v := range TemplateVars(it.template.URITemplate) {
			props[v] = map[string]any{"type": "string", "description": "variable of " + it.template.URITemplate}
			required = append(required, v)
		}
	case it.prompt != nil:
		name, desc = it.prompt.Name, it.prompt.Description
		for _, a := range it.prompt.Arguments {
			p := map[string]any{"type": "string"}
			if a.Description != "" {
				p["description"] = a.Description
			}
			props[a.Name] = p
			if a.Required {
				required = append(required, a.Name)
			}
		}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	raw, _ := json.Marshal(schema)
	return mcp.Tool{Name: name, Description: desc, InputSchema: raw}
}

func (m *Model) formUpdate(msg tea.Msg) tea.Cmd {
	before, _, _ := m.form.FocusedText()
	act, cmd := m.form.Update(msg)
	if after, _, _ := m.form.FocusedText(); after != before && m.compl != nil {
		// The completion shown was the field left behind's: not this one's.
		m.compl, m.status = nil, ""
	}
	switch act {
	case form.Cancel:
		m.form, m.compl, m.status = nil, nil, ""
	case form.Submit:
		m.compl = nil
		var vals map[string]string
		if err := json.Unmarshal(m.form.Args(), &vals); err != nil {
			m.status = "the values must be strings"
			return cmd
		}
		m.form = nil
		m.busy = true
		it := m.formTarget
		if it.template != nil {
			uri := ExpandTemplate(it.template.URITemplate, vals)
			return tea.Batch(cmd, func() tea.Msg { return ReadMsg{URI: uri} })
		}
		name := it.prompt.Name
		return tea.Batch(cmd, func() tea.Msg { return GetPromptMsg{Name: name, Args: vals} })
	}
	return cmd
}

// showRead puts a read's contents in the detail area.
func (m *Model) showRead(msg ReadResultMsg) {
	m.detailTitle, m.detail, m.blob, m.scroll = "read "+msg.URI, nil, nil, 0
	if msg.Err != nil {
		m.detail = []string{"error: " + msg.Err.Error()}
		return
	}
	for i, c := range msg.Result.Contents {
		var data []byte
		kind := "text"
		if c.Blob != nil {
			kind = "blob"
			b, err := base64.StdEncoding.DecodeString(*c.Blob)
			if err != nil {
				m.detail = append(m.detail, fmt.Sprintf("contents[%d]: blob is not base64: %v", i, err))
				continue
			}
			data = b
		} else if c.Text != nil {
			data = []byte(*c.Text)
		}
		mime := c.MimeType
		if mime == "" {
			mime = "no MIME type"
		}
		m.detail = append(m.detail, fmt.Sprintf("── %s · %s · %s · %s", textfmt.Escape(c.URI), kind, mime, textfmt.Size(len(data))))
		if m.blob == nil {
			m.blob = &SaveMsg{URI: c.URI, Data: data}
		}
		if c.Blob != nil {
			m.detail = append(m.detail, "(binary contents: w saves them to a file)")
			continue
		}
		m.detail = append(m.detail, textLines(*c.Text)...)
	}
}

// showPrompt puts a prompt's messages in the detail area.
func (m *Model) showPrompt(msg PromptResultMsg) {
	m.detailTitle, m.detail, m.blob, m.scroll = "prompt "+msg.Name, nil, nil, 0
	if msg.Err != nil {
		m.detail = []string{"error: " + msg.Err.Error()}
		return
	}
	if d := msg.Result.Description; d != "" {
		m.detail = append(m.detail, textLines(d)...)
	}
	for _, pm := range msg.Result.Messages {
		m.detail = append(m.detail, "── "+textfmt.Escape(pm.Role))
		c := pm.Content
		switch {
		case c.Type == "text":
			m.detail = append(m.detail, textLines(c.Text)...)
		case c.Type == "resource" && c.Resource != nil:
			r := c.Resource
			if r.Text != nil {
				m.detail = append(m.detail, "[resource "+textfmt.Escape(r.URI)+"]")
				m.detail = append(m.detail, textLines(*r.Text)...)
			} else {
				m.detail = append(m.detail, "[resource "+textfmt.Escape(r.URI)+", binary]")
			}
		case c.Type == "image" || c.Type == "audio":
			m.detail = append(m.detail, fmt.Sprintf("[%s %s, %d bytes base64]", c.Type, textfmt.Escape(c.MimeType), len(c.Data)))
		default:
			m.detail = append(m.detail, "["+textfmt.Escape(c.Type)+" content]")
		}
	}
}

// textLines splits text into escaped lines.
func textLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = textfmt.Escape(strings.TrimSuffix(l, "\r"))
	}
	return lines
}

// complete asks for completions of the focused field, or, when the last
// completion was for this field and its value is one of them, steps to the
// next value.
func (m *Model) complete() tea.Cmd {
	if !m.hasCompletions {
		return nil
	}
	name, text, ok := m.form.FocusedText()
	if !ok {
		m.status = "completion works on text fields"
		return nil
	}
	if c := m.compl; c != nil && c.Argument.Name == name && c.Completion != nil {
		for i, v := range c.Completion.Values {
			if v == text {
				m.form.SetText(name, c.Completion.Values[(i+1)%len(c.Completion.Values)])
				return nil
			}
		}
	}
	ref := mcp.CompleteRef{Type: mcp.RefPrompt}
	if t := m.formTarget.template; t != nil {
		ref = mcp.CompleteRef{Type: mcp.RefResource, URI: t.URITemplate}
	} else {
		ref.Name = m.formTarget.prompt.Name
	}
	ctx := m.form.Texts()
	delete(ctx, name)
	if len(ctx) == 0 {
		ctx = nil
	}
	msg := CompleteMsg{Ref: ref, Argument: mcp.CompleteArgument{Name: name, Value: text}, Context: ctx}
	m.status = "completing " + name + "…"
	return func() tea.Msg { return msg }
}

// completed shows a completion and fills the field with its first value,
// if the form is still open on that field.
func (m *Model) completed(msg CompletionMsg) {
	if m.form == nil {
		return
	}
	name, _, ok := m.form.FocusedText()
	switch {
	case msg.Err != nil:
		m.status = "completion: " + msg.Err.Error()
		return
	case !ok || name != msg.Argument.Name:
		return
	case len(msg.Completion.Values) == 0:
		m.status = "no completions for " + name
		m.compl = nil
		return
	}
	m.compl = &msg
	vals := msg.Completion.Values
	m.form.SetText(name, vals[0])
	more := ""
	if msg.Completion.HasMore || (msg.Completion.Total != nil && *msg.Completion.Total > len(vals)) {
		more = " …"
	}
	shown := vals[:min(len(vals), 8)]
	m.status = name + ": " + strings.Join(shown, " · ") + more
	if len(vals) > 1 {
		m.status += " (ctrl+o: next)"
	}
}
