package serve

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// session returns a copy of s ready to serve one client: every recorded
// answer unplayed, only the recorded session n (1-based; 0 keeps every
// session as one pool), with o's strictness and repeat rule.
func (s *Script) session(n int, o Options) (*Script, error) {
	if n < 0 || n > s.Sessions {
		return nil, fmt.Errorf("--session %d: the capture holds %d session(s)", n, s.Sessions)
	}
	c := *s
	c.strict, c.repeat, c.loose = o.Strict, o.Repeat, o.Loose && !o.Strict
	c.Exchanges = nil
	for _, ex := range s.Exchanges {
		if n == 0 || ex.Session == n {
			cp := *ex
			cp.used = 0
			c.Exchanges = append(c.Exchanges, &cp)
		}
	}
	c.notes = map[string][]*Anchor{}
	for m, q := range s.notes {
		for _, a := range q {
			if n == 0 || a.Session == n {
				c.notes[m] = append(c.notes[m], a)
			}
		}
	}
	c.answers = map[string]*Anchor{}
	for k, a := range s.answers {
		if n == 0 {
			c.answers[k] = a
		} else if a.Session == n {
			_, id, _ := strings.Cut(k, " ")
			c.answers["0 "+id] = a
		}
	}
	if n > 0 {
		c.Start = *s.starts[n-1]
		h := s.sessions[n-1]
		c.ProtocolVersion, c.ServerName, c.ServerVersion = h.version, h.name, h.serverVersion
		c.Sessions = 1
		c.starts = []*Anchor{&c.Start}
		c.sessions = []handshake{h}
	}
	return &c, nil
}

// recordedResult returns the result of the first recorded answer to method
// (nil when the capture has none).
func (s *Script) recordedResult(method string) json.RawMessage {
	for _, ex := range s.Exchanges {
		if ex.Method != method {
			continue
		}
		for _, l := range ex.Lines {
			if l.Kind != Response {
				continue
			}
			if msg, err := jsonrpc.Decode(l.Raw); err == nil && msg.Kind == jsonrpc.KindResponse && len(msg.Result) > 0 {
				return msg.Result
			}
		}
	}
	return nil
}

// capabilities are the recorded server's capabilities: those of its
// recorded initialize answer, else of its recorded server/discover answer,
// else tools only.
func (s *Script) capabilities() map[string]json.RawMessage {
	for _, m := range []string{mcp.MethodInitialize, mcp.MethodServerDiscover} {
		var r struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		if res := s.recordedResult(m); res != nil && json.Unmarshal(res, &r) == nil && r.Capabilities != nil {
			return r.Capabilities
		}
	}
	return map[string]json.RawMessage{"tools": json.RawMessage("{}")}
}

// versions are the protocol versions the recorded server answered with in
// its recorded initialize answers, and listed in its recorded discovery.
func (s *Script) versions() map[string]bool {
	out := map[string]bool{}
	if s.ProtocolVersion != "" {
		out[s.ProtocolVersion] = true
	}
	for _, ex := range s.Exchanges {
		if ex.Method != mcp.MethodInitialize && ex.Method != mcp.MethodServerDiscover {
			continue
		}
		for _, l := range ex.Lines {
			if l.Kind != Response {
				continue
			}
			msg, err := jsonrpc.Decode(l.Raw)
			if err != nil || len(msg.Result) == 0 {
				continue
			}
			var r struct {
				ProtocolVersion   string   `json:"protocolVersion"`
				SupportedVersions []string `json:"supportedVersions"`
			}
			if json.Unmarshal(msg.Result, &r) == nil {
				if r.ProtocolVersion != "" {
					out[r.ProtocolVersion] = true
				}
				for _, v := range r.SupportedVersions {
					out[v] = true
				}
			}
		}
	}
	return out
}

// handshakeVersion is the protocol version the mock answers an initialize
// with, for a client asking for asked when the matched recorded answer
// says recorded: recorded when the client asks for it, else the client's
// when the recorded server answered it (in some recorded answer), else
// recorded. It returns "" when the recorded answer is kept as it is.
func (s *Script) handshakeVersion(asked, recorded string) string {
	if asked == "" || asked == recorded || recorded == "" || !s.versions()[asked] {
		return ""
	}
	return asked
}

// initializeVersions returns the version a client's initialize asks for and
// the one the recorded answer of ex says.
func initializeVersions(params json.RawMessage, ex *Exchange) (asked, recorded string) {
	var p mcp.InitializeParams
	_ = json.Unmarshal(params, &p)
	for _, l := range ex.Lines {
		if l.Kind != Response {
			continue
		}
		if msg, err := jsonrpc.Decode(l.Raw); err == nil {
			var r mcp.InitializeResult
			if json.Unmarshal(msg.Result, &r) == nil {
				recorded = r.ProtocolVersion
			}
		}
	}
	return p.ProtocolVersion, recorded
}

// declared reports whether the recorded server declared capability cap
// (and, when sub is not "", its boolean member sub as true).
func declared(caps map[string]json.RawMessage, cap, sub string) bool {
	raw, ok := caps[cap]
	if !ok || string(raw) == "null" {
		return false
	}
	if sub == "" {
		return true
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	b, _ := m[sub].(bool)
	return b
}

// synthesize answers a request the capture has no recorded answer for,
// when it is housekeeping the mock can answer on its own (not in strict
// mode, except ping and initialize): the result, and what the log says
// about it. ok is false when it is not such a request.
func (s *Script) synthesize(method string, params json.RawMessage) (result json.RawMessage, why string, ok bool) {
	switch method {
	case mcp.MethodPing:
		return json.RawMessage("{}"), "{}", true
	case mcp.MethodInitialize:
		return s.initResult(params), "from the session record and the recorded capabilities", true
	}
	if s.strict {
		return nil, "", false
	}
	caps := s.capabilities()
	list := func(cap, member string) (json.RawMessage, string, bool) {
		if !declared(caps, cap, "") || cursorOf(params) != "" {
			return nil, "", false
		}
		return json.RawMessage(`{"` + member + `":[]}`), "an empty list (the recorded server declared " + cap + ")", true
	}
	switch method {
	case mcp.MethodLoggingSetLevel:
		if declared(caps, "logging", "") {
			return json.RawMessage("{}"), "{} (the recorded server declared logging)", true
		}
	case mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe:
		if declared(caps, "resources", "subscribe") {
			return json.RawMessage("{}"), "{} (the recorded server declared resources.subscribe)", true
		}
	case mcp.MethodToolsList:
		return list("tools", "tools")
	case mcp.MethodPromptsList:
		return list("prompts", "prompts")
	case mcp.MethodResourcesList:
		return list("resources", "resources")
	case mcp.MethodResourceTemplatesList:
		return list("resources", "resourceTemplates")
	case mcp.MethodComplete:
		return json.RawMessage(`{"completion":{"values":[],"total":0,"hasMore":false}}`), "an empty completion", true
	case mcp.MethodServerDiscover:
		return s.discoverResult(), "from the recorded initialize", true
	}
	return nil, "", false
}

// discoverResult is a server/discover result synthesized from the recorded
// initialize: its version, capabilities, server info and instructions.
func (s *Script) discoverResult() json.RawMessage {
	var r mcp.InitializeResult
	if res := s.recordedResult(mcp.MethodInitialize); res != nil {
		_ = json.Unmarshal(res, &r)
	} else {
		_ = json.Unmarshal(s.initResult(nil), &r)
	}
	var versions []string
	for v := range s.versions() {
		versions = append(versions, v)
	}
	if len(versions) == 0 && r.ProtocolVersion != "" {
		versions = []string{r.ProtocolVersion}
	}
	sortVersions(versions)
	caps, _ := json.Marshal(s.capabilities())
	meta, _ := json.Marshal(map[string]any{mcp.MetaServerInfo: r.ServerInfo})
	b, _ := json.Marshal(mcp.DiscoverResult{SupportedVersions: versions, Capabilities: caps, Instructions: r.Instructions, Meta: meta})
	return b
}

// sortVersions sorts protocol versions (dates) newest first.
func sortVersions(v []string) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] > v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// RewriteResultMember returns a response line with result.key replaced by
// val (JSON), every other byte as recorded.
func RewriteResultMember(raw []byte, key string, val []byte) ([]byte, bool) {
	return setInner(raw, "result", key, val)
}
