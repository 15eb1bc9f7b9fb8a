package form

import (
	"encoding/json"
)

// maxSkeletonDepth bounds how deep a skeleton follows nested objects.
const maxSkeletonDepth = 4

// skeleton is a value of the shape schema raw describes, for the JSON
// editor to start from: an object with its required properties (each a
// skeleton of its own: "" for a string, 0, false, [] or {}), an array of
// objects as one such object in an array. Nil when the schema says too
// little to build one (no type, a combinator, a reference).
func skeleton(raw json.RawMessage, depth int) json.RawMessage {
	var s struct {
		Type       json.RawMessage `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
		Items      json.RawMessage `json:"items"`
		Default    json.RawMessage `json:"default"`
		Enum       []json.RawMessage
		Const      json.RawMessage `json:"const"`
	}
	if depth > maxSkeletonDepth || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	switch {
	case len(s.Default) > 0:
		return compact(s.Default)
	case len(s.Const) > 0:
		return compact(s.Const)
	case len(s.Enum) > 0:
		return compact(s.Enum[0])
	}
	switch typeName(s.Type) {
	case "string":
		return json.RawMessage(`""`)
	case "number", "integer":
		return json.RawMessage(`0`)
	case "boolean":
		return json.RawMessage(`false`)
	case "array":
		if item := skeleton(s.Items, depth+1); len(item) > 0 && item[0] == '{' {
			return json.RawMessage("[" + string(item) + "]")
		}
		return json.RawMessage(`[]`)
	case "object":
		return objectSkeleton(s.Properties, s.Required, depth)
	}
	return nil
}

// objectSkeleton is an object with the required properties of props, in
// the schema's order, each with its skeleton (null when it has none).
func objectSkeleton(props json.RawMessage, required []string, depth int) json.RawMessage {
	names, vals, err := orderedObject(props)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	req := make(map[string]bool, len(required))
	for _, r := range required {
		req[r] = true
	}
	var keep []string
	var kv []json.RawMessage
	for i, n := range names {
		if !req[n] {
			continue
		}
		v := skeleton(vals[i], depth+1)
		if v == nil {
			v = json.RawMessage(`null`)
		}
		keep, kv = append(keep, n), append(kv, v)
	}
	return encodeObject(keep, kv)
}

// withSkeletons adds to args (an object) a skeleton for each required
// property that the editor needs (Nested) and args lacks, so the JSON
// editor starts from the shape the schema asks for. Properties stay in
// schema order; keys of args that are not properties follow.
func (f *Form) withSkeletons(args json.RawMessage) json.RawMessage {
	names, vals, err := orderedObject(args)
	if err != nil {
		return args
	}
	have := make(map[string]json.RawMessage, len(names))
	for i, n := range names {
		have[n] = vals[i]
	}
	added := false
	var outN []string
	var outV []json.RawMessage
	known := make(map[string]bool, len(f.fields))
	for _, fl := range f.fields {
		p := fl.prop
		known[p.Name] = true
		switch v, ok := have[p.Name]; {
		case ok:
			outN, outV = append(outN, p.Name), append(outV, v)
		case p.Required && p.Skeleton != nil:
			outN, outV = append(outN, p.Name), append(outV, p.Skeleton)
			added = true
		}
	}
	if !added {
		return args
	}
	for i, n := range names {
		if !known[n] {
			outN, outV = append(outN, n), append(outV, vals[i])
		}
	}
	return encodeObject(outN, outV)
}
