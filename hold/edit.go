package hold

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Edit forwards msg (the whole new message) in place of the frame held as
// handle. msg is checked first, and refused with the reason while the
// frame stays held: it must be one JSON-RPC message (a JSON error gives
// its byte offset), at most MaxEditBytes, and a request may not take an id
// already in flight the same way. It is sent compact (one line), so it
// frames on stdio as one message.
func (e *Engine) Edit(by client.HoldBy, handle string, msg []byte) error {
	line, err := e.checkEdit(handle, msg)
	if err != nil {
		return err
	}
	return e.finish(handle, client.HoldEdited, by, line, 0)
}

func (e *Engine) checkEdit(handle string, msg []byte) ([]byte, error) {
	line, m, err := compactMessage(msg)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.held[handle]
	if h == nil {
		_, err := e.take(handle)
		return nil, err
	}
	if m.Kind == jsonrpc.KindRequest && m.ID.IsValid() {
		k := reqKey{h.f.dir, m.ID.String()}
		same := h.f.msg.Kind == jsonrpc.KindRequest && h.f.item.ID == k.id
		if !same && e.reqs.has(k) {
			return nil, &Error{Code: CodeBadEdit, Msg: fmt.Sprintf("the edit gives the request id %s, which a request %s already has in flight: two answers would be matched to one; keep id %s or pick a free one", k.id, dirWords(h.f.dir), h.f.item.ID)}
		}
	}
	return line, nil
}

func dirWords(d client.Direction) string {
	if d == client.In {
		return "from the server"
	}
	return "to the server"
}

// compactMessage checks that msg is one JSON-RPC message and returns it on
// one line.
func compactMessage(msg []byte) ([]byte, jsonrpc.Message, error) {
	if len(msg) > MaxEditBytes {
		return nil, jsonrpc.Message{}, &Error{Code: CodeBadEdit, Msg: fmt.Sprintf("the edit is %d bytes, over the %d allowed", len(msg), MaxEditBytes)}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, bytes.TrimSpace(msg)); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, jsonrpc.Message{}, &Error{Code: CodeBadEdit, Msg: fmt.Sprintf("the edit is not JSON: %v at byte %d", se, se.Offset), Err: err}
		}
		return nil, jsonrpc.Message{}, &Error{Code: CodeBadEdit, Msg: "the edit is not JSON: " + err.Error(), Err: err}
	}
	m, err := jsonrpc.Decode(buf.Bytes())
	if err != nil {
		return nil, jsonrpc.Message{}, &Error{Code: CodeBadEdit, Msg: "the edit is not a JSON-RPC message: " + err.Error(), Err: err}
	}
	return buf.Bytes(), m, nil
}

// Answer answers the request held as handle in its receiver's place: its
// sender gets a response with the request's id, carrying result (a JSON
// value) or rpcErr, and the receiver never sees the request. A frame that
// is not a request with an id is refused (it stays held).
func (e *Engine) Answer(by client.HoldBy, handle string, result json.RawMessage, rpcErr *jsonrpc.Error) error {
	e.mu.Lock()
	h := e.held[handle]
	if h == nil {
		_, err := e.take(handle)
		e.mu.Unlock()
		return err
	}
	if h.f.msg.Kind != jsonrpc.KindRequest || !h.f.msg.ID.IsValid() {
		kind := h.f.item.Kind
		if !h.f.ok {
			kind = "line that is not a JSON-RPC message"
		}
		e.mu.Unlock()
		return &Error{Code: CodeNotRequest, Msg: fmt.Sprintf("%s is a %s, not a request: only a request can be answered (release, edit or drop it)", handle, kind)}
	}
	id := h.f.msg.ID
	e.mu.Unlock()
	var (
		resp []byte
		err  error
	)
	switch {
	case rpcErr != nil:
		resp, err = jsonrpc.EncodeError(id, rpcErr)
	default:
		if len(result) > MaxEditBytes {
			return &Error{Code: CodeBadEdit, Msg: fmt.Sprintf("the answer is %d bytes, over the %d allowed", len(result), MaxEditBytes)}
		}
		var buf bytes.Buffer
		if cerr := json.Compact(&buf, bytes.TrimSpace(result)); cerr != nil || buf.Len() == 0 {
			msg := "the answer's result is not JSON"
			var se *json.SyntaxError
			if errors.As(cerr, &se) {
				msg = fmt.Sprintf("%s: %v at byte %d", msg, se, se.Offset)
			}
			return &Error{Code: CodeBadEdit, Msg: msg, Err: cerr}
		}
		resp, err = jsonrpc.EncodeResult(id, buf.Bytes())
	}
	if err != nil {
		return &Error{Code: CodeBadEdit, Msg: "the answer cannot be encoded: " + err.Error(), Err: err}
	}
	return e.finish(handle, client.HoldAnswered, by, resp, 0)
}
