package sessions

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// Host is who the host says it is: the clientInfo of its first request
// (initialize's params, or a modern request's _meta) and the protocol the
// session speaks (the version initialize agreed on; a modern request's
// own until then).
func (s *Tapped) Host() string {
	h := s.ClientName
	if h != "" && s.ClientVersion != "" {
		h += " " + s.ClientVersion
	}
	if s.Protocol != "" {
		if h != "" {
			h += " · "
		}
		h += s.Protocol
	}
	return h
}

// hostFrame reads the clientInfo of the host's first request, a frame
// record line from the host to the server; the others are not decoded.
func (s *Tapped) hostFrame(line []byte) {
	if s.hostSeen || !bytes.Contains(line, []byte(`,"dir":"out"`)) || !bytes.Contains(line, []byte(`,"kind":"request"`)) {
		return
	}
	var rec struct {
		ID  jsonrpc.ID
		Raw string
		B64 bool
	}
	if json.Unmarshal(line, &rec) != nil || client.Injected(rec.ID) {
		return
	}
	s.hostSeen = true
	raw := []byte(rec.Raw)
	if rec.B64 {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(rec.Raw); err != nil {
			return
		}
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			mcp.InitializeParams
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return
	}
	info, version := req.Params.ClientInfo, req.Params.ProtocolVersion
	if req.Method != mcp.MethodInitialize {
		info, version = mcp.Implementation{}, ""
		json.Unmarshal(req.Params.Meta[mcp.MetaClientInfo], &info)
		json.Unmarshal(req.Params.Meta[mcp.MetaProtocolVersion], &version)
	}
	s.ClientName, s.ClientVersion = info.Name, info.Version
	if s.Protocol == "" {
		s.Protocol = version
	}
}

// sessionRecord takes the protocol the handshake agreed on from the
// recorder's session record.
func (s *Tapped) sessionRecord(line []byte) {
	var rec struct {
		ProtocolVersion string `json:"protocol_version"`
	}
	if json.Unmarshal(line, &rec) == nil && rec.ProtocolVersion != "" {
		s.Protocol = rec.ProtocolVersion
	}
}
