package mcp

import "encoding/json"

// ModernVersion is the protocol version of the modern era (2026-07-28 and
// later): no initialize, the version and the client's capabilities in every
// request's _meta, server/discover, and input_required results instead of
// requests from the server.
const ModernVersion = "2026-07-28"

// The _meta keys of the modern era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// The values of a modern result's resultType; an absent resultType means
// ResultComplete.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	// ResultTask is the answer of the tasks extension (ExtensionTasks): a
	// task was created instead of a result.
	ResultTask = "task"
)

// ExtensionTasks names the modern era's tasks extension, declared in
// capabilities.extensions.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Modern-era JSON-RPC error codes (-32020…-32099 are reserved by the spec).
const (
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	ResultType        string          `json:"resultType,omitempty"`
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities,omitempty"`
	Instructions      string          `json:"instructions,omitempty"`
	TTLMs             *int64          `json:"ttlMs,omitempty"`
	CacheScope        string          `json:"cacheScope,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// InputRequest is one entry of an input_required result's inputRequests:
// what a legacy server would have sent as a request of its own.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequiredResult is a result whose resultType is input_required. The
// client answers every input request and sends the request again, under a
// new id, with inputResponses (same keys) and the exact requestState.
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  json.RawMessage         `json:"requestState,omitempty"`
}
