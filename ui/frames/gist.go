package frames

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
)

// gistLimit bounds the gist's length in runes: the preview column is
// never wider than a screen.
const gistLimit = 512

// gist is what the preview column shows of a frame: what a person wants
// to read without opening it. A request or notification shows its key
// params (a call its arguments, a read its uri; the method is beside it);
// a result its first text, or isError and the error's text; an error
// response its code and message; a result of a list its count and first
// names. A line that is not JSON-RPC shows its bytes. The text is
// sanitized (one line, no control characters).
func gist(f *client.FrameInfo) string {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(f.Raw, &m) != nil {
		return textfmt.Preview(f.Raw, gistLimit)
	}
	var s string
	switch {
	case m.Error != nil:
		s = fmt.Sprintf("error %s: %s", mcp.CodeText(m.Error.Code), m.Error.Message)
	case m.Method != "":
		s = paramsGist(m.Method, m.Params)
	case m.Result != nil:
		s = resultGist(m.Result)
	default:
		return textfmt.Preview(f.Raw, gistLimit)
	}
	return textfmt.Preview([]byte(s), gistLimit)
}

// paramsGist is the key params of a request or notification.
func paramsGist(method string, params json.RawMessage) string {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || len(p) == 0 {
		return ""
	}
	switch method {
	case mcp.MethodToolsCall, mcp.MethodPromptsGet:
		if a, ok := p["arguments"]; ok {
			return compact(a)
		}
		return ""
	case mcp.MethodInitialize:
		var q struct {
			Version string `json:"protocolVersion"`
			Info    struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"clientInfo"`
		}
		_ = json.Unmarshal(params, &q)
		return strings.TrimSpace(q.Info.Name + " " + q.Info.Version + " · " + q.Version)
	}
	delete(p, "_meta")
	return pairs(p)
}

// resultGist is the gist of a result: its first text (isError first when
// set), a list's count and first names, a server's name and protocol, or
// its top-level fields.
func resultGist(result json.RawMessage) string {
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil {
		return compact(result)
	}
	var isErr bool
	_ = json.Unmarshal(r["isError"], &isErr)
	if c, ok := r["content"]; ok {
		var content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(c, &content)
		s := ""
		for _, it := range content {
			if it.Type == "text" {
				s = strings.Join(strings.Fields(it.Text), " ")
				break
			}
		}
		if s == "" && len(content) > 0 {
			s = fmt.Sprintf("%d %s item", len(content), content[0].Type) + plural(len(content))
		}
		if isErr {
			return strings.TrimSpace("isError " + s)
		}
		return s
	}
	for _, list := range []string{"tools", "prompts", "resources", "resourceTemplates", "tasks"} {
		if l, ok := r[list]; ok {
			return listGist(list, l)
		}
	}
	if _, ok := r["serverInfo"]; ok {
		var q struct {
			Version string `json:"protocolVersion"`
			Info    struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"serverInfo"`
		}
		_ = json.Unmarshal(result, &q)
		return strings.TrimSpace(q.Info.Name + " " + q.Info.Version + " · " + q.Version)
	}
	delete(r, "_meta")
	if len(r) == 0 {
		return "{}"
	}
	return pairs(r)
}

// listGist is "3 tools: echo, add, slow".
func listGist(kind string, l json.RawMessage) string {
	var items []struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(l, &items)
	names := make([]string, 0, min(len(items), 8))
	for _, it := range items[:min(len(items), 8)] {
		names = append(names, pick(it.Name != "", it.Name, it.URI))
	}
	kind = strings.TrimSuffix(kind, "s")
	s := fmt.Sprintf("%d %s%s", len(items), kind, plural(len(items)))
	if len(names) > 0 {
		s += ": " + strings.Join(names, ", ")
	}
	return s
}

func plural(n int) string { return pick(n == 1, "", "s") }

// pairs writes an object's fields as key=value, by key: a string as it
// is, anything else as compact JSON.
func pairs(p map[string]json.RawMessage) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		var s string
		if json.Unmarshal(p[k], &s) != nil {
			s = compact(p[k])
		}
		b.WriteString(k + "=" + s)
		if b.Len() > gistLimit {
			break
		}
	}
	return b.String()
}

// compact is raw JSON without its insignificant spaces.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
