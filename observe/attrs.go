package observe

import (
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
)

// The error.type values of failures that are not a JSON-RPC error code
// (docs/otel.md). A JSON-RPC error is its code as a string; a tool result
// with isError is ToolError.
const (
	ErrTypeToolError   = "tool_error"
	ErrTypeTimeout     = "timeout"
	ErrTypeCancelled   = "cancelled"
	ErrTypeProcessExit = "process_exit"
	ErrTypeClosed      = "session_closed"
	ErrTypeProtocol    = "protocol_error"
	ErrTypeConnection  = "connection_error"
	ErrTypeOther       = "_OTHER"
)

// Where the conventions give no name, sonde's own (docs/otel.md).
const (
	// eventProgress, eventCancel, eventLate, eventDuplicate and
	// eventUnknown are span events on a request's span.
	eventProgress  = "progress"
	eventCancel    = "cancel"
	eventLate      = "late answer"
	eventDuplicate = "duplicate answer"
	eventUnknown   = "unknown answer"
	// eventRound is the event of an operation span for each
	// input_required round.
	eventRound = "input_required"
	// attrRounds counts an operation's rounds (input_required retries + 1).
	attrRounds = attribute.Key("sonde.mcp.rounds")
)

// spanName is {mcp.method.name} {target}: the tool or the prompt, else
// the method alone ("(no method)" for a message whose method is empty: a
// span needs a name).
func spanName(method, tool, prompt string) string {
	switch {
	case method == "":
		return "(no method)"
	case method == mcp.MethodToolsCall && tool != "":
		return method + " " + tool
	case method == mcp.MethodPromptsGet && prompt != "":
		return method + " " + prompt
	}
	return method
}

// hasResourceURI reports whether a method's mcp.resource.uri is
// conditionally required.
func hasResourceURI(method string) bool {
	switch method {
	case mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodResourceUpdated:
		return true
	}
	return false
}

// idAttr is jsonrpc.request.id as a string; none for a missing or null id.
func idAttr(id jsonrpc.ID) (attribute.KeyValue, bool) {
	if !id.IsValid() {
		return attribute.KeyValue{}, false
	}
	if s, ok := id.Str(); ok {
		return semconv.JSONRPCRequestID(s), true
	}
	n, _ := id.Int64()
	return semconv.JSONRPCRequestID(strconv.FormatInt(n, 10)), true
}

// serverSideNotError lists the JSON-RPC codes that, answered by the side
// that received a request (a SERVER span), are not an error of the
// operation: the caller's mistake, not the receiver's failure.
func serverSideNotError(code int64) bool {
	switch code {
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeMethodNotFound, jsonrpc.CodeInvalidParams, -32002:
		return true
	}
	return false
}

// outcomeErrType is the error.type of an outcome that is not an answer
// (the answers are decided from their frame), and the description of the
// span's ERROR status.
func outcomeErrType(r *client.ReqInfo) (string, string) {
	desc := ""
	if r.Err != nil {
		desc = r.Err.Error()
	}
	var e *client.Error
	errors.As(r.Err, &e)
	switch r.State {
	case client.StateTimeout:
		return ErrTypeTimeout, desc
	case client.StateCancelled:
		return ErrTypeCancelled, desc
	case client.StateExited:
		return ErrTypeProcessExit, desc
	case client.StateClosed:
		return ErrTypeClosed, desc
	case client.StateProtocol:
		return ErrTypeProtocol, desc
	case client.StateHTTP:
		if e != nil && e.HTTP != nil && e.HTTP.Status > 0 {
			return strconv.Itoa(e.HTTP.Status), desc
		}
		return ErrTypeConnection, desc
	case client.StateError:
		if e != nil && e.RPC != nil {
			return strconv.FormatInt(e.RPC.Code, 10), e.RPC.Message
		}
	}
	return ErrTypeOther, desc
}
