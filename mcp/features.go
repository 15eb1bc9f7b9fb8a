package mcp

import "encoding/json"

// Method names of the server features: resources, prompts, completion and
// logging (2025-11-25/server/*).
const (
	MethodResourcesList         = "resources/list"
	MethodResourceTemplatesList = "resources/templates/list"
	MethodResourcesRead         = "resources/read"
	MethodResourcesSubscribe    = "resources/subscribe"
	MethodResourcesUnsubscribe  = "resources/unsubscribe"
	MethodResourceUpdated       = "notifications/resources/updated"
	MethodResourcesChanged      = "notifications/resources/list_changed"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodPromptsChanged        = "notifications/prompts/list_changed"
	MethodComplete              = "completion/complete"
	MethodLoggingSetLevel       = "logging/setLevel"
)

// ListParams is the params object of a paginated list request
// (resources/list, resources/templates/list, prompts/list, tasks/list).
type ListParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// Resource is one entry of resources/list.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// ResourceTemplate is one entry of resources/templates/list; URITemplate is
// an RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// URIParams is the params object of resources/read, resources/subscribe,
// resources/unsubscribe and notifications/resources/updated.
type URIParams struct {
	URI string `json:"uri"`
}

// ResourceContents is one entry of a resources/read result (and the
// resource of an embedded "resource" content block): Text for text
// contents, Blob (base64) for binary contents. Text is a pointer so that an
// empty text is told apart from no text.
type ResourceContents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptArgument is one argument a prompt accepts.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt is one entry of prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// GetPromptParams is the params object of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// PromptContent is the content block of a prompt message: the fields of
// Content plus the embedded resource of a "resource" block.
type PromptContent struct {
	Content
	Resource *ResourceContents `json:"resource,omitempty"`
}

// PromptMessage is one message of a prompts/get result.
type PromptMessage struct {
	Role    string        `json:"role"`
	Content PromptContent `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Reference types of completion/complete.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteRef is what a completion is for: a prompt (Type RefPrompt, Name)
// or a resource template (Type RefResource, URI).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its value so far.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries the values of arguments already resolved
// (2025-06-18 and later).
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams is the params object of completion/complete.
type CompleteParams struct {
	Ref      CompleteRef      `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	Context  *CompleteContext `json:"context,omitempty"`
}

// Completion is the completion object of a completion/complete result.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// LogLevels are the levels of logging/setLevel and notifications/message,
// least severe first (RFC 5424).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogLevelRank returns the position of level in LogLevels, or -1.
func LogLevelRank(level string) int {
	for i, l := range LogLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// SetLevelParams is the params object of logging/setLevel.
type SetLevelParams struct {
	Level string `json:"level"`
}

// LogMessageParams is the params object of notifications/message; Data is
// any JSON value.
type LogMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// ServerCapabilities is the part of an InitializeResult's capabilities
// that sonde acts on. A nil member means the server did not declare it.
type ServerCapabilities struct {
	Tools       *ListChangedCap `json:"tools,omitempty"`
	Prompts     *ListChangedCap `json:"prompts,omitempty"`
	Resources   *ResourcesCap   `json:"resources,omitempty"`
	Logging     json.RawMessage `json:"logging,omitempty"`
	Completions json.RawMessage `json:"completions,omitempty"`
	Tasks       *TasksCap       `json:"tasks,omitempty"`
}

// ListChangedCap is a capability with an optional listChanged flag.
type ListChangedCap struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCap is the resources capability.
type ResourcesCap struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// TasksCap is the tasks capability (2025-11-25): List and Cancel are set
// when tasks/list and tasks/cancel are supported; Requests names the
// requests that may be task-augmented.
type TasksCap struct {
	List     json.RawMessage `json:"list,omitempty"`
	Cancel   json.RawMessage `json:"cancel,omitempty"`
	Requests *struct {
		Tools *struct {
			Call json.RawMessage `json:"call,omitempty"`
		} `json:"tools,omitempty"`
	} `json:"requests,omitempty"`
}

// ToolCallTasks reports whether tools/call may be task-augmented.
func (t *TasksCap) ToolCallTasks() bool {
	return t != nil && t.Requests != nil && t.Requests.Tools != nil && t.Requests.Tools.Call != nil
}
