// Package mcp holds MCP method names and the schema structs sonde reads and
// writes (initialize, tools, content blocks, progress, cancellation). Fields
// sonde does not interpret are kept as raw JSON so nothing is lost.
package mcp

import "encoding/json"

// Method names used by the core engine.
const (
	MethodInitialize     = "initialize"
	MethodInitialized    = "notifications/initialized"
	MethodPing           = "ping"
	MethodToolsList      = "tools/list"
	MethodToolsCall      = "tools/call"
	MethodCancelled      = "notifications/cancelled"
	MethodProgress       = "notifications/progress"
	MethodLogMessage     = "notifications/message"
	MethodToolsChanged   = "notifications/tools/list_changed"
	MethodServerDiscover = "server/discover"
)

// LatestVersion is the newest legacy-era protocol version (the default that
// sonde asks for in initialize).
const LatestVersion = "2025-11-25"

// SupportedVersions lists the legacy-era versions sonde can speak, newest first.
var SupportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// IsSupportedVersion reports whether v is one of SupportedVersions.
func IsSupportedVersion(v string) bool {
	for _, s := range SupportedVersions {
		if s == v {
			return true
		}
	}
	return false
}

// Implementation names a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeParams is the params object of initialize.
type InitializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      Implementation  `json:"clientInfo"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	ServerInfo      Implementation  `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

// Tool is one entry of tools/list.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Execution (2025-11-25) says whether the tool runs as a task.
	Execution *ToolExecution `json:"execution,omitempty"`
	// Meta is the tool's _meta (MCP Apps put _meta.ui there).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ToolExecution is a tool's execution object: TaskSupport is "required",
// "optional" or "forbidden" (absent: forbidden).
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// TaskRequired reports whether the tool may only be called as a task.
func (t Tool) TaskRequired() bool {
	return t.Execution != nil && t.Execution.TaskSupport == "required"
}

// ListToolsParams is the params object of tools/list.
type ListToolsParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CallToolParams is the params object of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      *RequestMeta    `json:"_meta,omitempty"`
}

// RequestMeta is the _meta object a client may attach to a request.
type RequestMeta struct {
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
}

// Content is one content block of a tool result. Text is set for type
// "text"; Data and MimeType for "image" and "audio"; URI for
// "resource_link". Annotations is the block's annotations object as sent
// (audience, priority, lastModified), kept raw so that a malformed one does
// not fail the whole result (ContentAnnotations reads it). Other fields of a
// block are not decoded here (the raw result keeps them).
type Content struct {
	Type        string          `json:"type"`
	Text        string          `json:"text,omitempty"`
	Data        string          `json:"data,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	URI         string          `json:"uri,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// CancelledParams is the params object of notifications/cancelled.
// RequestID is the id of the request, as JSON (an integer or a string).
// Reason comes first so that the encoding is the one sonde always sent
// (the keys in sorted order).
type CancelledParams struct {
	Reason    string          `json:"reason,omitempty"`
	RequestID json.RawMessage `json:"requestId"`
}

// ProgressParams is the params object of notifications/progress.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}
