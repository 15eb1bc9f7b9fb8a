package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// answerFlags say how the server's requests are answered: roots/list from
// --root, sampling and elicitation from reply files. What is given is what
// sonde declares in initialize.
type answerFlags struct {
	roots          []string
	samplingReply  string
	elicitReply    string
	elicitDefaults bool
	noClientTasks  bool
}

func (a *answerFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&a.roots, "root", nil, "declare roots and answer roots/list with directory `DIR` as a file:// URI (repeatable)")
	fs.StringVar(&a.samplingReply, "sampling-reply", "", "declare sampling and answer every sampling/createMessage with `FILE`: a CreateMessageResult in JSON, or plain text used as the answer")
	fs.StringVar(&a.elicitReply, "elicit-reply", "", "declare elicitation and answer every elicitation/create with `FILE`: an ElicitResult in JSON, or one of the words accept, decline, cancel")
	fs.BoolVar(&a.elicitDefaults, "elicit-defaults", false, "declare elicitation and accept every form elicitation with the defaults of its requestedSchema")
	fs.BoolVar(&a.noClientTasks, "no-client-tasks", false, "do not declare tasks for sampling and elicitation (a request with params.task is then answered directly instead of as a task sonde runs)")
}

// given reports whether any flag declares a capability.
func (a *answerFlags) given() bool {
	return len(a.roots) > 0 || a.samplingReply != "" || a.elicitReply != "" || a.elicitDefaults
}

// undeclaredHelp is added to the error sonde answers a request it did not
// declare with, so the server's log says how to get an answer.
func undeclaredHelp() map[string]string {
	return map[string]string{
		mcp.MethodRootsList:     "sonde declares roots when given --root DIR",
		mcp.MethodCreateMessage: "to answer it, give sonde --sampling-reply FILE (or use the interactive UI)",
		mcp.MethodElicit:        "to answer it, give sonde --elicit-reply FILE or --elicit-defaults (or use the interactive UI)",
	}
}

// serverRequests turns the flags into the client's configuration. A bad
// root or reply file is a usage error naming the flag.
func (a *answerFlags) serverRequests() (client.ServerRequests, error) {
	sr := client.ServerRequests{Undeclared: undeclaredHelp(), Tasks: !a.noClientTasks}
	for _, dir := range a.roots {
		r, err := client.DirRoot(dir)
		if err != nil {
			return sr, cmdutil.Usagef("--root: " + err.Error())
		}
		sr.Roots = true
		sr.RootList = append(sr.RootList, r)
	}
	sampling, err := readReply("--sampling-reply", a.samplingReply, samplingResult)
	if err != nil {
		return sr, err
	}
	sr.Sampling = a.samplingReply != ""
	if a.elicitReply != "" && a.elicitDefaults {
		return sr, cmdutil.Usagef("give --elicit-reply or --elicit-defaults, not both")
	}
	elicit, err := readReply("--elicit-reply", a.elicitReply, elicitResult)
	if err != nil {
		return sr, err
	}
	sr.Elicitation = elicit != nil || a.elicitDefaults
	if sr.Sampling || sr.Elicitation {
		defaults := a.elicitDefaults
		sr.Handler = func(r client.ServerRequest) (json.RawMessage, *jsonrpc.Error, bool) {
			switch {
			case r.Method == mcp.MethodCreateMessage && sampling != nil:
				return sampling, nil, true
			case r.Method == mcp.MethodElicit && elicit != nil:
				return forMode(elicit, r.Params), nil, true
			case r.Method == mcp.MethodElicit && defaults:
				res, rpcErr := acceptDefaults(r.Params)
				return res, rpcErr, true
			}
			return nil, nil, false
		}
	}
	return sr, nil
}

// readReply reads the answer file of flag (path; "" when the flag is not
// given: a nil answer) through parse. Its errors are usage errors naming
// the flag, and the file when it was read.
func readReply(flag, path string, parse func([]byte) (json.RawMessage, error)) (json.RawMessage, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, cmdutil.Usagef(flag + ": " + err.Error())
	}
	res, err := parse(b)
	if err != nil {
		return nil, cmdutil.Usagef(flag + " " + path + ": " + err.Error())
	}
	return res, nil
}

// samplingResult reads a --sampling-reply file: a JSON object with role,
// content and model, or any other text, sent as the assistant's answer.
func samplingResult(b []byte) (json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		var r struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
			Model   *string         `json:"model"`
		}
		if err := json.Unmarshal(t, &r); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", err)
		}
		if r.Role == "" || r.Model == nil || (!jsonKind(r.Content, '{') && !jsonKind(r.Content, '[')) {
			return nil, fmt.Errorf(`a CreateMessageResult needs role, content (an object, or a list of them) and model, e.g. {"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`)
		}
		return compactJSON(t), nil
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	res, _ := json.Marshal(mcp.CreateMessageResult{Role: "assistant", Content: mcp.Content{Type: "text", Text: strings.TrimRight(string(b), "\r\n")}, Model: "sonde", StopReason: "endTurn"})
	return res, nil
}

// elicitResult reads an --elicit-reply file: accept, decline or cancel, or
// an ElicitResult object.
func elicitResult(b []byte) (json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	switch word := strings.ToLower(string(t)); word {
	case mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
		res, _ := json.Marshal(mcp.ElicitResult{Action: word})
		return res, nil
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(t, &r); err != nil {
		return nil, fmt.Errorf(`want accept, decline, cancel, or JSON like {"action":"accept","content":{"name":"x"}}: %v`, err)
	}
	switch r.Action {
	case mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
	default:
		return nil, fmt.Errorf("action %q: want accept, decline or cancel", r.Action)
	}
	if r.Content != nil && !jsonKind(r.Content, '{') {
		return nil, fmt.Errorf(`content: want an object of the form's fields, like {"name":"x"} (or no content)`)
	}
	return compactJSON(t), nil
}

// jsonKind reports whether the JSON value v starts with c ('{': an
// object, '[': a list).
func jsonKind(v json.RawMessage, c byte) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == c
}

// forMode drops the content of a reply to a URL-mode elicitation, which
// takes none.
func forMode(reply, params json.RawMessage) json.RawMessage {
	var p mcp.ElicitParams
	_ = json.Unmarshal(params, &p)
	if p.Mode != "url" {
		return reply
	}
	var r mcp.ElicitResult
	_ = json.Unmarshal(reply, &r)
	out, _ := json.Marshal(mcp.ElicitResult{Action: r.Action})
	return out
}

// acceptDefaults answers a form elicitation with accept and the default of
// every property of requestedSchema that has one. A required property
// without a default cannot be answered this way: the answer is an error
// saying so. A URL elicitation is accepted.
func acceptDefaults(params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
	var p mcp.ElicitParams
	_ = json.Unmarshal(params, &p)
	if p.Mode == "url" {
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(p.RequestedSchema, &schema); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "--elicit-defaults: requestedSchema is not a JSON object: " + err.Error()}
	}
	content := map[string]json.RawMessage{}
	for name, prop := range schema.Properties {
		if len(prop.Default) > 0 {
			content[name] = prop.Default
		}
	}
	for _, name := range schema.Required {
		if _, ok := content[name]; !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "--elicit-defaults: required field " + name + " has no default; answer with --elicit-reply FILE"}
		}
	}
	c, _ := json.Marshal(content)
	res, _ := json.Marshal(mcp.ElicitResult{Action: mcp.ElicitAccept, Content: c})
	return res, nil
}

func compactJSON(b []byte) json.RawMessage {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
