package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// The rules over tool results: structured-content-text and output-schema.
// The output schemas come from the tools/list results the stream showed
// (the last one wins); a call to a tool no list declared is not checked
// against a schema.

// maxSchemas bounds the output schemas a Linter remembers (beyond, the
// tools of a later list are not checked).
const maxSchemas = 1024

// maxSchemaBytes bounds one output schema the linter compiles.
const maxSchemaBytes = 64 << 10

// outSchema is a tool's declared outputSchema, compiled on first use.
type outSchema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
	bad      bool // it does not compile: not checked (doctor says why)
}

// requestParams returns a request's params. A live frame of sonde's own may
// carry them only in its bytes: they are read from there when the message
// has none.
func requestParams(f *client.FrameInfo) json.RawMessage {
	if len(f.Msg.Params) != 0 {
		return f.Msg.Params
	}
	var r struct {
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(f.Raw, &r) != nil {
		return nil
	}
	return r.Params
}

// target names what a tools/call, prompts/get or resources/read is about:
// its params.name, or params.uri ("" for other methods).
func target(method string, params json.RawMessage) string {
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet, mcp.MethodResourcesRead:
	default:
		return ""
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	if method == mcp.MethodResourcesRead {
		return p.URI
	}
	return p.Name
}

// learnSchemas keeps the output schemas of a tools/list result.
func (l *Linter) learnSchemas(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if !bytes.Contains(result, []byte(`"outputSchema"`)) || json.Unmarshal(result, &r) != nil {
		return
	}
	for _, t := range r.Tools {
		if len(t.OutputSchema) == 0 || jsonType(t.OutputSchema) != jsObject || len(t.OutputSchema) > maxSchemaBytes {
			continue
		}
		if _, ok := l.schemas[t.Name]; !ok && len(l.schemas) >= maxSchemas {
			continue
		}
		l.schemas[t.Name] = &outSchema{raw: t.OutputSchema}
	}
}

func (s *outSchema) schema() *jsonschema.Schema {
	if s.compiled != nil || s.bad {
		return s.compiled
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.raw))
	if err == nil {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err = c.AddResource("output.json", doc); err == nil {
			s.compiled, err = c.Compile("output.json")
		}
	}
	s.bad = err != nil
	return s.compiled
}

// callResult is what the tool rules read of a CallToolResult.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
	ResultType string          `json:"resultType"`
}

// toolResult: structured-content-text and output-schema, on the result
// answering a tools/call of sonde's.
func (l *Linter) toolResult(ev client.Event) {
	p, ok := l.answered(ev)
	if ok && p.method == mcp.MethodToolsList {
		l.learnSchemas(ev.Frame.Msg.Result)
	}
	if !ok || p.method != mcp.MethodToolsCall {
		return
	}
	s := l.schemas[p.target]
	if s == nil && !bytes.Contains(ev.Frame.Msg.Result, []byte(`"structuredContent"`)) {
		return // most results: nothing to check, and no decoding
	}
	var r callResult
	if json.Unmarshal(ev.Frame.Msg.Result, &r) != nil {
		return
	}
	if r.ResultType != "" && r.ResultType != mcp.ResultComplete {
		return // input_required, task: not the tool's answer yet
	}
	name := fmt.Sprintf("tool %q", p.target)
	if r.Structured != nil && jsonType(r.Structured) != jsNull && !hasText(r) {
		l.add(ev, RuleStructuredText, name+": structuredContent but no text block (the spec asks for its serialized JSON in one: a client that reads only content sees nothing)")
	}
	if s == nil || r.IsError {
		return
	}
	if r.Structured == nil {
		l.add(ev, RuleOutputSchema, name+" declares an outputSchema, but its result has no structuredContent")
		return
	}
	sch := s.schema()
	if sch == nil {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Structured))
	if err != nil {
		return
	}
	if err := sch.Validate(inst); err != nil {
		l.add(ev, RuleOutputSchema, name+": structuredContent does not conform to its outputSchema: "+schemaProblem(err))
	}
}

// hasText reports whether the result has a text block. The spec asks
// for one holding the serialized JSON; a text block with other words (a
// sentence, the value alone: what many servers write) is not reported, so
// that the rule names the results a client reading only content gets
// nothing from.
func hasText(r callResult) bool {
	for _, c := range r.Content {
		if c.Type == "text" {
			return true
		}
	}
	return false
}

// canonical re-encodes a JSON value (object keys sorted, no spaces).
func canonical(b []byte) ([]byte, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return json.Marshal(v)
}

// schemaProblem says in one line where a value breaks its schema: the
// deepest causes, two at most.
func schemaProblem(err error) string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, e.Error())
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	more := ""
	if len(out) > 2 {
		out, more = out[:2], fmt.Sprintf(" (and %d more)", len(out)-2)
	}
	return strings.Join(out, "; ") + more
}
