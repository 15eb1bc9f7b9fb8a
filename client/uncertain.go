package client

import "context"

// UncertainNote is what the message of a failed call whose execution is
// uncertain (Uncertain) ends with, wherever it is shown.
const UncertainNote = " (execution uncertain: the tool is not read-only and may have run; check before calling it again)"

// Uncertain reports whether a tools/call that ended with err may still have
// done its work: the tool is not read-only (its annotations do not say
// readOnlyHint: true, the spec's default), the request was sent (it has an
// id), and it ended without an answer (timeout, cancel, the server gone or
// closed, the session broken or flooded, a failed HTTP exchange). A call
// refused before it was sent did nothing.
func Uncertain(readOnly, sent bool, err error) bool {
	if readOnly || !sent || err == nil {
		return false
	}
	switch CodeOf(err) {
	case CodeTimeout, CodeAborted, CodeProcessExit, CodeClosed, CodeProtocol, CodeHTTP, CodeFlood:
		return true
	}
	return false
}

// ReadOnlyTool reports whether the server's tool name says readOnlyHint:
// true, from a tools/list made now (bounded by ctx). A tool it cannot
// find, or a listing that fails (the session is gone), is not read-only:
// it may have side effects.
func (c *Client) ReadOnlyTool(ctx context.Context, name string) bool {
	tools, err := c.ListTools(ctx)
	if err != nil {
		return false
	}
	for _, t := range tools {
		if t.Name == name {
			return t.ReadOnly()
		}
	}
	return false
}
