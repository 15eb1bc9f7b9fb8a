package manager

import (
	"context"
	"errors"
)

// ReasonKind says why a call was stopped by someone other than the server.
type ReasonKind string

// The reasons a call stops without the server having answered it.
const (
	// UserCancel: the user stopped the run (Ctrl-C, the whole run
	// cancelled). A deliberate stop: never counted as a tool failure.
	UserCancel ReasonKind = "user-cancel"
	// BudgetStop: the run's time budget (its context deadline) ran out. A
	// deliberate stop too.
	BudgetStop ReasonKind = "budget-stop"
	// ProcessFailure: the server's process ended, or its session broke
	// (a protocol violation, a notification flood), under the call.
	ProcessFailure ReasonKind = "process-failure"
)

// Reason is the structured cause of a call the manager stopped: it is the
// cause of the call's context, so the client's MCP_ABORTED error wraps it
// (errors.As(err, &reason)), and CallError.Reason carries it.
type Reason struct {
	Kind   ReasonKind
	Detail string
}

// Error is "user-cancel: detail".
func (r *Reason) Error() string {
	if r.Detail == "" {
		return string(r.Kind)
	}
	return string(r.Kind) + ": " + r.Detail
}

// Deliberate reports whether the stop was sonde's or the user's choice
// (not a failure of the server or of the tool).
func (r *Reason) Deliberate() bool {
	return r != nil && (r.Kind == UserCancel || r.Kind == BudgetStop)
}

// reasonOf turns the end of a caller's context into a Reason: a Reason
// given as the cause is kept; a deadline is a budget stop; anything else
// the user's cancel.
func reasonOf(ctx context.Context) *Reason {
	cause := context.Cause(ctx)
	var r *Reason
	if errors.As(cause, &r) {
		return r
	}
	if errors.Is(cause, context.DeadlineExceeded) {
		return &Reason{Kind: BudgetStop, Detail: "the run's deadline passed"}
	}
	return &Reason{Kind: UserCancel, Detail: "the run was cancelled"}
}
