package mcp

import "encoding/json"

// Methods of the requests a server sends to the client, and the client's
// notification about its roots.
const (
	MethodRootsList      = "roots/list"
	MethodRootsChanged   = "notifications/roots/list_changed"
	MethodCreateMessage  = "sampling/createMessage"
	MethodElicit         = "elicitation/create"
	MethodElicitComplete = "notifications/elicitation/complete"
)

// Root is one entry of a roots/list result: a file:// URI and a name.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRootsResult is the result of roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
}

// SamplingMessage is one message of a sampling/createMessage request.
// Content is one content block, or (2025-11-25) an array of them.
type SamplingMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// CreateMessageParams is the part of sampling/createMessage's params that
// sonde shows; the raw params keep the rest.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	MaxTokens        int               `json:"maxTokens,omitempty"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
}

// CreateMessageResult is the result of sampling/createMessage.
type CreateMessageResult struct {
	Role       string  `json:"role"`
	Content    Content `json:"content"`
	Model      string  `json:"model"`
	StopReason string  `json:"stopReason,omitempty"`
}

// ElicitParams is the params object of elicitation/create: form mode
// (Mode "" or "form", with RequestedSchema) or URL mode (Mode "url", with
// URL and ElicitationID).
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// The actions of an ElicitResult.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the result of elicitation/create. Content is set only
// with ElicitAccept in form mode.
type ElicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}
