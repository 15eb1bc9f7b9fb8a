// Package features is the pane of the server's features in sonde's TUI:
// three views, switched with ←/→ or R, P and L.
//
//   - Resources: the resources and resource templates the server lists.
//     enter reads a resource, or opens a form for a template's variables
//     (RFC 6570) and reads the expanded URI; the contents show below the
//     list (text as is, blobs by size and type), w saves the decoded bytes
//     of the shown contents to a file; s subscribes to the selected
//     resource (or unsubscribes), and notifications/resources/updated marks
//     it.
//   - Prompts: the prompts; enter opens a form for the prompt's arguments
//     (required ones enforced) and gets it; the messages show below.
//
// In the form of a template or prompt, ctrl+o asks the server to complete
// the focused field (completion/complete, when the server declared the
// completions capability): the values are listed, the first fills the
// field, and ctrl+o again steps to the next.
//   - Log: every notifications/message, filtered by level (+/- raise and
//     lower the threshold) and logger (g cycles through the loggers seen);
//     s asks the server for the threshold level (logging/setLevel).
//
// A notifications/resources/list_changed or prompts/list_changed makes the
// pane ask for the lists again (WantsRefresh); the new lists are compared
// with the old: added, removed and changed entries are marked, and counted
// in the title.
//
// The pane does no I/O. What it asks the root for comes back as a tea.Cmd
// producing one of ReadMsg, GetPromptMsg, SubscribeMsg, SetLevelMsg,
// SaveMsg, CompleteMsg or RefreshMsg; the results come back as ListedMsg,
// ReadResultMsg, PromptResultMsg, SubscribedMsg, LevelSetMsg, SavedMsg and
// CompletionMsg.
package features

import (
	"encoding/json"

	"github.com/sonde-mcp/sonde/mcp"
)

// ReadMsg asks the root to read URI (resources/read).
type ReadMsg struct{ URI string }

// GetPromptMsg asks the root to get a prompt (prompts/get).
type GetPromptMsg struct {
	Name string
	Args map[string]string
}

// SubscribeMsg asks the root to subscribe to URI (On) or unsubscribe.
type SubscribeMsg struct {
	URI string
	On  bool
}

// SetLevelMsg asks the root to send logging/setLevel.
type SetLevelMsg struct{ Level string }

// SaveMsg asks the root to write Data to a new file named after URI.
type SaveMsg struct {
	URI  string
	Data []byte
}

// RefreshMsg asks the root to list resources, templates and prompts again.
type RefreshMsg struct{}

// CompleteMsg asks the root for completion/complete of one argument of a
// prompt or template variable; Context holds the other values typed.
type CompleteMsg struct {
	Ref      mcp.CompleteRef
	Argument mcp.CompleteArgument
	Context  map[string]string
}

// CompletionMsg is the outcome of a CompleteMsg.
type CompletionMsg struct {
	Argument   mcp.CompleteArgument
	Completion *mcp.Completion
	Err        error
}

// ListedMsg carries the lists; Err is the first failure (the lists read
// before it are kept). Resources, Templates and Prompts are nil when the
// server did not declare the capability (they were not asked for).
type ListedMsg struct {
	Resources []mcp.Resource
	Templates []mcp.ResourceTemplate
	Prompts   []mcp.Prompt
	// HasResources, HasPrompts and HasCompletions say whether the server
	// declared them.
	HasResources, HasPrompts, HasCompletions bool
	Err                                      error
}

// ReadResultMsg is the outcome of a ReadMsg.
type ReadResultMsg struct {
	URI    string
	Result *mcp.ReadResourceResult
	Raw    json.RawMessage
	Err    error
}

// PromptResultMsg is the outcome of a GetPromptMsg.
type PromptResultMsg struct {
	Name   string
	Result *mcp.GetPromptResult
	Err    error
}

// SubscribedMsg is the outcome of a SubscribeMsg.
type SubscribedMsg struct {
	URI string
	On  bool
	Err error
}

// LevelSetMsg is the outcome of a SetLevelMsg.
type LevelSetMsg struct {
	Level string
	Err   error
}

// SavedMsg is the outcome of a SaveMsg: the file written, or the error.
type SavedMsg struct {
	Path string
	Err  error
}
