package client

import "encoding/json"

// RequestMetaFunc returns members to add to the params._meta of request id
// as it is registered (for example the trace context of sonde's span for
// it: traceparent, tracestate). It is called with the client's lock held,
// once per request (a retry after input_required is a new request): it
// must be quick and must not call the client. Members the params already
// have are kept.
type RequestMetaFunc func(id int64, method string) map[string]json.RawMessage

// withRequestMeta adds the hook's members to params._meta.
func (c *Client) withRequestMeta(params json.RawMessage, id int64, method string) json.RawMessage {
	if c.opts.RequestMeta == nil {
		return params
	}
	meta := c.opts.RequestMeta(id, method)
	if len(meta) == 0 {
		return params
	}
	return withMeta(params, meta)
}
