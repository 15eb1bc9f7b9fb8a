package lint

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sonde-mcp/sonde/mcp"
)

// The JSON types.
const (
	jsString = "string"
	jsNumber = "number"
	jsBool   = "boolean"
	jsObject = "object"
	jsArray  = "array"
	jsNull   = "null"
)

// a is a type with its article ("an array").
func a(t string) string {
	if t == jsArray || t == jsObject {
		return "an " + t
	}
	return "a " + t
}

// field is a member of an object in a list result, with the JSON type the
// specification's schema gives it. The types checked are the same in every
// revision that has the field (2024-11-05 to 2026-07-28: later revisions
// add fields, such as title and icons, but change no type), so one shape
// serves them all; a field a revision lacks is simply absent.
type field struct {
	name string
	typ  string  // string, number, boolean, object, array
	sub  []field // the members of an object, or of each object of an array
}

var annotationsTool = []field{
	{name: "title", typ: jsString},
	{name: "readOnlyHint", typ: jsBool},
	{name: "destructiveHint", typ: jsBool},
	{name: "idempotentHint", typ: jsBool},
	{name: "openWorldHint", typ: jsBool},
}

var annotationsContent = []field{
	{name: "audience", typ: jsArray},
	{name: "priority", typ: jsNumber},
	{name: "lastModified", typ: jsString},
}

var icons = field{name: "icons", typ: jsArray, sub: []field{{name: "src", typ: jsString}, {name: "mimeType", typ: jsString}, {name: "sizes", typ: jsArray}}}

var meta = field{name: "_meta", typ: jsObject}

// The items of each list (schema.ts: Tool, Resource, ResourceTemplate,
// Prompt).
var (
	toolShape = []field{
		{name: "name", typ: jsString}, {name: "title", typ: jsString}, {name: "description", typ: jsString},
		{name: "inputSchema", typ: jsObject}, {name: "outputSchema", typ: jsObject},
		{name: "annotations", typ: jsObject, sub: annotationsTool},
		{name: "execution", typ: jsObject, sub: []field{{name: "taskSupport", typ: jsString}}},
		icons, meta,
	}
	resourceShape = []field{
		{name: "uri", typ: jsString}, {name: "name", typ: jsString}, {name: "title", typ: jsString},
		{name: "description", typ: jsString}, {name: "mimeType", typ: jsString}, {name: "size", typ: jsNumber},
		{name: "annotations", typ: jsObject, sub: annotationsContent}, icons, meta,
	}
	templateShape = []field{
		{name: "uriTemplate", typ: jsString}, {name: "name", typ: jsString}, {name: "title", typ: jsString},
		{name: "description", typ: jsString}, {name: "mimeType", typ: jsString},
		{name: "annotations", typ: jsObject, sub: annotationsContent}, icons, meta,
	}
	promptShape = []field{
		{name: "name", typ: jsString}, {name: "title", typ: jsString}, {name: "description", typ: jsString},
		{name: "arguments", typ: jsArray, sub: []field{
			{name: "name", typ: jsString}, {name: "title", typ: jsString},
			{name: "description", typ: jsString}, {name: "required", typ: jsBool},
		}},
		icons, meta,
	}
)

// listShape returns the key of a list method's result that holds its items,
// and their shape (nil for a method that is not a list).
func listShape(method string) (string, []field) {
	switch method {
	case mcp.MethodToolsList:
		return "tools", toolShape
	case mcp.MethodResourcesList:
		return "resources", resourceShape
	case mcp.MethodResourceTemplatesList:
		return "resourceTemplates", templateShape
	case mcp.MethodPromptsList:
		return "prompts", promptShape
	}
	return "", nil
}

// maxErrors bounds the type errors listTypeErrors collects.
const maxErrors = 64

// listTypeErrors returns, for a list result, every value whose JSON type
// is not the schema's, as a path and what it is ("tools[0] (echo).annotations.readOnlyHint
// is a string, not a boolean"), at most maxErrors. A result that is not an
// object is not its business (invalid-message's).
func listTypeErrors(result json.RawMessage, key string, shape []field) []string {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	var out []string
	if c, ok := r["nextCursor"]; ok {
		if t := jsonType(c); t != jsString {
			out = append(out, "nextCursor is a "+t+", not a string")
		}
	}
	list, ok := r[key]
	if !ok {
		return out
	}
	if t := jsonType(list); t != jsArray {
		return append(out, key+" is "+a(t)+", not an array")
	}
	var items []json.RawMessage
	if json.Unmarshal(list, &items) != nil {
		return out
	}
	for i, it := range items {
		path := key + "[" + strconv.Itoa(i) + "]"
		if name := itemName(it); name != "" {
			path += " (" + name + ")"
		}
		out = checkObject(out, path, it, shape)
		if len(out) >= maxErrors {
			return out[:maxErrors]
		}
	}
	return out
}

// itemName is an item's name (or uri), to say which item is wrong.
func itemName(it json.RawMessage) string {
	var n struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(it, &n) != nil || len(n.Name) > 80 {
		return ""
	}
	return strconv.Quote(n.Name)
}

// checkObject appends the type errors of the object v at path.
func checkObject(out []string, path string, v json.RawMessage, shape []field) []string {
	if t := jsonType(v); t != jsObject {
		return append(out, fmt.Sprintf("%s is %s, not an object", path, a(t)))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return out
	}
	for _, f := range shape {
		val, ok := obj[f.name]
		if !ok {
			continue
		}
		p := path + "." + f.name
		t := jsonType(val)
		if t != f.typ {
			out = append(out, fmt.Sprintf("%s is %s (%s), not %s", p, a(t), clip(val), a(f.typ)))
			continue
		}
		out = checkSub(out, p, val, f)
	}
	return out
}

// checkSub checks the members of an object field, or of each object of
// an array field.
func checkSub(out []string, path string, v json.RawMessage, f field) []string {
	if f.sub == nil {
		return out
	}
	if f.typ == jsObject {
		return checkObject(out, path, v, f.sub)
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil {
		return out
	}
	for i, it := range items {
		out = checkObject(out, path+"["+strconv.Itoa(i)+"]", it, f.sub)
		if len(out) >= maxErrors {
			break
		}
	}
	return out
}

// clip is the start of a value, for a message.
func clip(v json.RawMessage) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}
