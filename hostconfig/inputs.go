package hostconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The input types of VS Code's "inputs" that sonde asks for. VS Code's
// third type, "command", runs a VS Code command: sonde cannot, so its
// value must be given (Env.Inputs, sonde's --input ID=VALUE).
const (
	// PromptString is asked as text (hidden when Password is set).
	PromptString = "promptString"
	// PickString is a choice among Options.
	PickString = "pickString"
)

// Input is a value a VS Code file asks the user for (its "inputs" list),
// referenced as ${input:ID}.
type Input struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	// Default is the value of an empty answer, and the value taken when
	// sonde cannot ask. A pickString's default is one of its options.
	Default  string `json:"default,omitempty"`
	Password bool   `json:"password,omitempty"`
	// Options are a pickString's choices, in file order.
	Options []Option `json:"options,omitempty"`
}

// Option is one choice of a pickString input. VS Code accepts a string
// (the value) or an object with a "value" and an optional "label".
type Option struct {
	Label string `json:"label,omitempty"`
	Value string `json:"value"`
}

// Text is how the option is shown: its value, or "label (value)".
func (o Option) Text() string {
	if o.Label == "" || o.Label == o.Value {
		return o.Value
	}
	return o.Label + " (" + o.Value + ")"
}

// CanAsk reports whether sonde can ask for the input: a promptString or a
// pickString (an input without a type is asked as text).
func (in Input) CanAsk() bool {
	return in.Type == "" || in.Type == PromptString || in.Type == PickString
}

// IsChoice reports whether the input is a pickString with options.
func (in Input) IsChoice() bool { return in.Type == PickString && len(in.Options) > 0 }

// allows reports whether v is a value the input can take: any text, or
// for a choice, one of the option values.
func (in Input) allows(v string) bool {
	if !in.IsChoice() {
		return true
	}
	for _, o := range in.Options {
		if o.Value == v {
			return true
		}
	}
	return false
}

// Choice returns the value an answer picks among a pickString's options:
// an option's number (1 for the first), value or label; an empty answer
// picks the default. ok is false when the answer picks nothing.
func (in Input) Choice(answer string) (value string, ok bool) {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return in.Default, in.Default != ""
	}
	if n, err := strconv.Atoi(answer); err == nil && n >= 1 && n <= len(in.Options) {
		return in.Options[n-1].Value, true
	}
	for _, o := range in.Options {
		if answer == o.Value {
			return o.Value, true
		}
	}
	for _, o := range in.Options {
		if o.Label != "" && answer == o.Label {
			return o.Value, true
		}
	}
	return "", false
}

// Errors an *InputError wraps.
var (
	// ErrInputType: the input's type is not one sonde can ask for
	// ("command", or a type VS Code does not have) and no value was given.
	ErrInputType = errors.New("input type sonde cannot ask for")
	// ErrNoValue: the input has no given value and no default, and the
	// Prompter cannot ask (ErrCannotAsk).
	ErrNoValue = errors.New("input without a value")
	// ErrNotAnOption: a pickString's value (given, or answered) is not one
	// of its options.
	ErrNotAnOption = errors.New("not one of the input's options")
	// ErrUnknownInput: a value was given for an id the file's "inputs"
	// does not have.
	ErrUnknownInput = errors.New("no such input")
	// ErrCannotAsk is what a Prompter returns (wrapped, with the reason)
	// when it has no way to ask, e.g. stdin is not a terminal: the input's
	// default is then taken, and without one the input is ErrNoValue.
	ErrCannotAsk = errors.New("sonde cannot ask")
)

// InputError is an input that got no usable value. Its message names the
// input and its description, says why, and how to give the value (sonde's
// --input ID=VALUE); it never holds a password input's value.
type InputError struct {
	Input Input
	// Err is ErrInputType, ErrNoValue, ErrNotAnOption, ErrUnknownInput or
	// the Prompter's error.
	Err error
	// Cause is why the Prompter could not ask (with ErrNoValue).
	Cause error
	// Value is the value refused (ErrNotAnOption); Given says it came from
	// Env.Inputs rather than from the Prompter.
	Value string
	Given bool
	// Known are the ids of the file's inputs (ErrUnknownInput).
	Known []string
}

// Error describes the failure.
func (e *InputError) Error() string {
	in := e.Input
	name := fmt.Sprintf("input %q", in.ID)
	if in.Description != "" {
		name += fmt.Sprintf(" (%q)", in.Description)
	}
	give := fmt.Sprintf("give its value with --input %s=VALUE", in.ID)
	switch {
	case errors.Is(e.Err, ErrInputType):
		why := "which VS Code does not have"
		if in.Type == "command" {
			why = "which runs a VS Code command"
		}
		return fmt.Sprintf("%s has type %q, %s: sonde cannot ask for it; %s", name, in.Type, why, give)
	case errors.Is(e.Err, ErrNoValue):
		return fmt.Sprintf("%s needs a value and has no default, and %v; %s", name, e.Cause, give)
	case errors.Is(e.Err, ErrNotAnOption):
		value := fmt.Sprintf("%q", e.Value)
		if in.Password {
			value = "the value"
		}
		from := "the answer"
		if e.Given {
			from = "--input " + in.ID
		}
		return fmt.Sprintf("%s: %s: %s is not one of its options (%s)", name, from, value, optionValues(in.Options))
	case errors.Is(e.Err, ErrUnknownInput):
		if len(e.Known) == 0 {
			return fmt.Sprintf("--input %s: the file has no \"inputs\"", in.ID)
		}
		return fmt.Sprintf("--input %s: the file has no input %q (its inputs: %s)", in.ID, in.ID, strings.Join(e.Known, ", "))
	}
	return fmt.Sprintf("%s: %v", name, e.Err)
}

// Unwrap returns the reason and, with ErrNoValue, why sonde could not ask.
func (e *InputError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// optionValues lists the option values for a message.
func optionValues(opts []Option) string {
	var vs []string
	for _, o := range opts {
		vs = append(vs, strconv.Quote(o.Value))
	}
	return strings.Join(vs, ", ")
}

// Inputs returns the inputs of the server's file (VS Code's "inputs").
func (s Server) Inputs() []Input { return append([]Input(nil), s.inputs...) }

// Secrets returns the values a resolved server's references brought in
// from outside its file: environment variables (${env:NAME}, ${NAME}) and
// inputs (asked, given or defaulted; not a pickString's choice, which is
// one of the file's own values), for the caller to keep out of what it records and
// shows (Resolve says which). It is empty for a server that Resolve did
// not return.
func (s Server) Secrets() []string { return append([]string(nil), s.secrets...) }

// CheckInputValues checks values given for the inputs of the server's file
// (sonde's --input) before it is resolved: every id must be one of the
// file's inputs, and a pickString's value one of its options. The error
// is an *InputError (ErrUnknownInput or ErrNotAnOption).
func (s Server) CheckInputValues(values map[string]string) error {
	ids := make([]string, 0, len(values))
	for id := range values {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var known []string
	for _, in := range s.inputs {
		known = append(known, in.ID)
	}
	for _, id := range ids {
		in, ok := s.input(id)
		if !ok {
			return &InputError{Input: Input{ID: id}, Err: ErrUnknownInput, Known: known}
		}
		if !in.allows(values[id]) {
			return &InputError{Input: in, Err: ErrNotAnOption, Value: values[id], Given: true}
		}
	}
	return nil
}

// input returns the input of the server's file with that id.
func (s Server) input(id string) (Input, bool) {
	for _, in := range s.inputs {
		if in.ID == id {
			return in, true
		}
	}
	return Input{}, false
}

// rawInput is one entry of "inputs" as written.
type rawInput struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	Description string          `json:"description"`
	Default     string          `json:"default"`
	Password    bool            `json:"password"`
	Options     json.RawMessage `json:"options"`
}

// parseInputs reads VS Code's "inputs" list. Inputs of the wrong shape
// are dropped (one without an id, one that is not an object); a pickString
// keeps the options that have the right shape (a string, or an object with
// a string "value" and an optional string "label"), and its default only
// when it is one of them. Each of these is a reason of the error returned
// (ErrShape), alongside the inputs kept.
func parseInputs(raw json.RawMessage) ([]Input, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: \"inputs\" is not a list of inputs (%s, want an array of objects with string \"id\", \"type\", \"description\", \"default\" and boolean \"password\")", ErrShape, kindOf(raw))
	}
	var out []Input
	var bad []string
	for i, item := range list {
		var r rawInput
		if err := json.Unmarshal(item, &r); err != nil {
			bad = append(bad, fmt.Sprintf("input %d is not an object with string \"id\", \"type\", \"description\", \"default\" and boolean \"password\"", i+1))
			continue
		}
		if r.ID == "" {
			bad = append(bad, fmt.Sprintf("input %d has no \"id\"", i+1))
			continue
		}
		in := Input{ID: r.ID, Type: r.Type, Description: r.Description, Default: r.Default, Password: r.Password}
		if in.Type == PickString {
			in.Options, bad = parseOptions(r, bad)
			if len(in.Options) > 0 && in.Default != "" && !in.allows(in.Default) {
				bad = append(bad, fmt.Sprintf("input %q: \"default\" %q is not one of its options (the default is ignored)", in.ID, in.Default))
				in.Default = ""
			}
		}
		out = append(out, in)
	}
	if bad != nil {
		return out, fmt.Errorf("%w: %s", ErrShape, strings.Join(bad, "; "))
	}
	return out, nil
}

// parseOptions reads a pickString's "options"; what is wrong is added to
// bad. Without usable options the input is asked as text.
func parseOptions(r rawInput, bad []string) ([]Option, []string) {
	if len(r.Options) == 0 || string(r.Options) == "null" {
		return nil, append(bad, fmt.Sprintf("input %q: a pickString needs \"options\" (it is asked as text)", r.ID))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r.Options, &items); err != nil {
		return nil, append(bad, fmt.Sprintf("input %q: \"options\" is %s, want an array of strings or of objects with \"label\" and \"value\" (it is asked as text)", r.ID, kindOf(r.Options)))
	}
	var opts []Option
	for i, item := range items {
		var s string
		if json.Unmarshal(item, &s) == nil {
			opts = append(opts, Option{Value: s})
			continue
		}
		var o struct {
			Label *string `json:"label"`
			Value *string `json:"value"`
		}
		if json.Unmarshal(item, &o) != nil || o.Value == nil {
			bad = append(bad, fmt.Sprintf("input %q: option %d is %s, want a string or an object with a string \"value\" and an optional string \"label\"", r.ID, i+1, kindOf(item)))
			continue
		}
		opt := Option{Value: *o.Value}
		if o.Label != nil {
			opt.Label = *o.Label
		}
		opts = append(opts, opt)
	}
	if len(items) == 0 {
		bad = append(bad, fmt.Sprintf("input %q: a pickString needs \"options\" (it is asked as text)", r.ID))
	}
	return opts, bad
}
