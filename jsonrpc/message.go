package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Kind says what a decoded message is.
type Kind uint8

// The kinds of message a line can hold.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

// String names the kind in lower case, as shown in frames.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error formats the error as "code: message".
func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Message is one decoded JSON-RPC message. Which fields are set depends on
// Kind: requests have ID, Method and Params; notifications Method and Params;
// responses ID and exactly one of Result or Error.
type Message struct {
	Kind   Kind
	ID     ID
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Request is an outgoing request as written on the wire.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Notification is an outgoing notification as written on the wire.
type Notification struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is an outgoing response as written on the wire. Exactly one of
// Result and Error should be set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      ID              `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// EncodeRequest returns the wire bytes of a request (no trailing newline).
func EncodeRequest(id ID, method string, params json.RawMessage) ([]byte, error) {
	return json.Marshal(Request{JSONRPC: Version, ID: id, Method: method, Params: params})
}

// EncodeNotification returns the wire bytes of a notification.
func EncodeNotification(method string, params json.RawMessage) ([]byte, error) {
	return json.Marshal(Notification{JSONRPC: Version, Method: method, Params: params})
}

// EncodeResult returns the wire bytes of a successful response.
func EncodeResult(id ID, result json.RawMessage) ([]byte, error) {
	if len(result) == 0 {
		result = json.RawMessage("{}")
	}
	return json.Marshal(Response{JSONRPC: Version, ID: id, Result: result})
}

// EncodeError returns the wire bytes of an error response.
func EncodeError(id ID, e *Error) ([]byte, error) {
	return json.Marshal(Response{JSONRPC: Version, ID: id, Error: e})
}
