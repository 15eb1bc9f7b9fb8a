// Package answer holds the dialogs through which the user answers what a
// server asks of sonde: a sampling/createMessage (the user writes the
// assistant's answer, or refuses), an elicitation/create in form mode (a
// form built from requestedSchema, with accept, decline and cancel) or in
// URL mode (the URL shown, with accept, decline and cancel), and the roots
// editor; and the dialog of a request the server refused with -32042
// (URLElicitationRequiredError), which shows the URLs to open and offers a
// retry (URLRequired).
//
// A dialog never does I/O: Update reports an Action, and the root sends
// the answer (client.Respond) or the roots (client.SetRoots) in a command.
package answer

import (
	"encoding/json"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/form"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// Kind is what a dialog answers.
type Kind uint8

// The kinds of dialog.
const (
	Sampling Kind = iota + 1 // sampling/createMessage
	Form                     // elicitation/create, form mode
	URL                      // elicitation/create, URL mode
)

// Action is what an Update asks the owner of the dialog to do.
type Action uint8

// The actions.
const (
	// None: keep the dialog open.
	None Action = iota
	// Send: the answer is ready (Answer); send it and close the dialog.
	Send
	// Later: close the dialog; the request keeps waiting (URLRequired:
	// close it).
	Later
	// Retry: close the dialog and send the request it is about again, with
	// the same arguments (URLRequired).
	Retry
)

// RefusedCode is the JSON-RPC error code of a sampling request the user
// refused (the spec's example for a user rejection).
const RefusedCode = -1

// Dialog answers one request from the server.
type Dialog struct {
	st   *theme.Styles
	keys KeyMap
	req  client.ServerRequest
	kind Kind

	sampling mcp.CreateMessageParams
	text     textarea.Model
	model    textinput.Model
	onModel  bool // the model field has the focus

	elicit mcp.ElicitParams
	form   *form.Form

	bad    string // why the params could not be read
	result json.RawMessage
	rpcErr *jsonrpc.Error
	w, h   int
}

// New returns the dialog for req (sampling/createMessage or
// elicitation/create).
func New(st *theme.Styles, req client.ServerRequest) *Dialog {
	d := &Dialog{st: st, keys: DefaultKeyMap(), req: req}
	if req.Method == mcp.MethodCreateMessage {
		d.kind = Sampling
		if err := json.Unmarshal(req.Params, &d.sampling); err != nil {
			d.bad = "params are not a CreateMessageRequest: " + err.Error()
		}
		d.text = textarea.New()
		d.text.Placeholder = "the assistant's answer"
		d.text.ShowLineNumbers = false
		d.text.SetStyles(textStyles(st))
		d.text.Focus()
		d.model = textinput.New()
		d.model.Prompt = ""
		d.model.SetValue("sonde")
		d.model.SetStyles(form.InputStyles(st))
		d.keys.setKind(Sampling)
		return d
	}
	if err := json.Unmarshal(req.Params, &d.elicit); err != nil {
		d.bad = "params are not an ElicitRequest: " + err.Error()
	}
	if d.elicit.Mode == "url" {
		d.kind = URL
		d.keys.setKind(URL)
		return d
	}
	d.kind = Form
	fk := form.DefaultKeyMap()
	fk.Submit.SetHelp("ctrl+s", "accept")
	fk.Enter.SetHelp("enter", "next / accept")
	fk.Cancel.SetHelp("esc", "answer later")
	d.form = form.New(st, fk, mcp.Tool{Name: "elicitation", Description: d.elicit.Message, InputSchema: d.elicit.RequestedSchema}, nil)
	d.form.SetVerb("answer")
	d.keys.setKind(Form)
	return d
}

func textStyles(st *theme.Styles) textarea.Styles {
	s := textarea.DefaultStyles(true)
	state := textarea.StyleState{Base: st.Text, Text: st.Text, CursorLine: st.Text, EndOfBuffer: st.Subtle, Placeholder: st.Subtle, Prompt: st.Subtle}
	s.Focused, s.Blurred = state, state
	s.Cursor.Color = st.Palette.Accent
	s.Cursor.Blink = false
	return s
}

// Request returns the request the dialog answers.
func (d *Dialog) Request() client.ServerRequest { return d.req }

// Kind returns what the dialog answers.
func (d *Dialog) Kind() Kind { return d.kind }

// Answer returns the result, or the JSON-RPC error, to send after Update
// returned Send.
func (d *Dialog) Answer() (json.RawMessage, *jsonrpc.Error) { return d.result, d.rpcErr }

// Capturing is true while a text field has the keyboard.
func (d *Dialog) Capturing() bool { return d.kind != URL }

// SetSize sets the inner size of the dialog.
func (d *Dialog) SetSize(w, h int) {
	d.w, d.h = w, h
	switch d.kind {
	case Sampling:
		d.text.SetWidth(max(w, 1))
		d.text.SetHeight(max(h-d.samplingHeader()-3, 1))
		d.model.SetWidth(max(w-10, 1))
	case Form:
		d.form.SetSize(w, max(h-1, 1))
	}
}

// Update handles a key or paste; it reports what to do next.
func (d *Dialog) Update(msg tea.Msg) (Action, tea.Cmd) {
	k, isKey := msg.(tea.KeyPressMsg)
	if isKey {
		switch {
		case key.Matches(k, d.keys.Later) && d.kind != Form:
			return Later, nil
		case key.Matches(k, d.keys.Decline):
			d.decide(mcp.ElicitDecline)
			return Send, nil
		case key.Matches(k, d.keys.Cancel):
			d.decide(mcp.ElicitCancel)
			return Send, nil
		case key.Matches(k, d.keys.Accept) && d.kind != Form:
			d.decide(mcp.ElicitAccept)
			return Send, nil
		case key.Matches(k, d.keys.Copy):
			return None, tea.SetClipboard(d.elicit.URL)
		case key.Matches(k, d.keys.Switch) && d.kind == Sampling:
			d.onModel = !d.onModel
			if d.onModel {
				d.text.Blur()
				return None, d.model.Focus()
			}
			d.model.Blur()
			return None, d.text.Focus()
		}
	}
	var cmd tea.Cmd
	switch d.kind {
	case Sampling:
		if d.onModel {
			d.model, cmd = d.model.Update(msg)
		} else {
			d.text, cmd = d.text.Update(msg)
		}
	case Form:
		var act form.Action
		act, cmd = d.form.Update(msg)
		switch act {
		case form.Submit:
			d.result, _ = json.Marshal(mcp.ElicitResult{Action: mcp.ElicitAccept, Content: d.form.Args()})
			return Send, cmd
		case form.Cancel:
			return Later, cmd
		}
	}
	return None, cmd
}

// decide sets the answer for accept, decline or cancel. For sampling,
// accept sends the text written and decline or cancel refuse the request
// with a JSON-RPC error.
func (d *Dialog) decide(action string) {
	if d.kind == Sampling {
		if action != mcp.ElicitAccept {
			d.rpcErr = &jsonrpc.Error{Code: RefusedCode, Message: "sampling refused by the user in sonde"}
			return
		}
		model := d.model.Value()
		if model == "" {
			model = "sonde"
		}
		d.result, _ = json.Marshal(mcp.CreateMessageResult{Role: "assistant", Content: mcp.Content{Type: "text", Text: d.text.Value()}, Model: model, StopReason: "endTurn"})
		return
	}
	d.result, _ = json.Marshal(mcp.ElicitResult{Action: action})
}
