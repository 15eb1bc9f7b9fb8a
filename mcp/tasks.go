package mcp

import "encoding/json"

// Method names of tasks (2025-11-25/basic/utilities/tasks).
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksList   = "tasks/list"
	MethodTaskStatus  = "notifications/tasks/status"
)

// Task statuses. Completed, Failed and Cancelled are terminal.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether a task in status s has ended.
func TaskTerminal(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskMetadata is params.task of a task-augmented request: the requested
// time to keep the task, in milliseconds.
type TaskMetadata struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// Task is the state of a task: the result of tasks/get and tasks/cancel,
// the task of a CreateTaskResult, and the params of
// notifications/tasks/status. TTL and PollInterval are milliseconds; a null
// TTL is an unlimited lifetime.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	TTL           *int64 `json:"ttl"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
}

// CreateTaskResult answers a task-augmented request.
type CreateTaskResult struct {
	Task Task `json:"task"`
}

// TaskIDParams is the params object of tasks/get, tasks/result and
// tasks/cancel.
type TaskIDParams struct {
	TaskID string `json:"taskId"`
}

// CallToolTaskParams is the params object of a task-augmented tools/call.
type CallToolTaskParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      TaskMetadata    `json:"task"`
}
