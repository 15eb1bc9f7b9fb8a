package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// CodeURLElicitationRequired is the JSON-RPC error code of
// URLElicitationRequiredError (2025-11-25): the server cannot go on with the
// request until the user has completed the URL elicitations listed in the
// error's data (out of band, in a browser); the client may then retry it.
const CodeURLElicitationRequired = -32042

// URLElicitationRequiredData is the data of a -32042 error. Each entry is
// the params of a URL-mode elicitation: Mode "url", Message, URL and
// ElicitationID.
type URLElicitationRequiredData struct {
	Elicitations []ElicitParams `json:"elicitations"`
}

// ElicitCompleteParams is the params object of
// notifications/elicitation/complete: the server says the URL elicitation
// ElicitationID is done.
type ElicitCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
}

// ErrURLElicitationData is matched (errors.Is) by every error of
// ParseURLElicitations: the data of a -32042 error does not hold URL
// elicitations as the spec describes them.
var ErrURLElicitationData = errors.New("bad URLElicitationRequiredError data")

// ParseURLElicitations reads the data of a -32042 error: an object whose
// "elicitations" is a non-empty array of URL-mode elicitations, each with
// mode "url", an elicitationId and an absolute URL (a scheme and a host);
// the message may be empty. Anything else is an error that wraps
// ErrURLElicitationData and says what is wrong (elicitations are numbered
// from 1).
func ParseURLElicitations(data json.RawMessage) ([]ElicitParams, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrURLElicitationData}, args...)...)
	}
	d := bytes.TrimSpace(data)
	if len(d) == 0 || string(d) == "null" {
		return nil, bad(`no data, want {"elicitations":[…]}`)
	}
	if d[0] != '{' {
		return nil, bad("data is not an object: %s", Clip(string(d), 80))
	}
	var raw struct {
		Elicitations json.RawMessage `json:"elicitations"`
	}
	if err := json.Unmarshal(d, &raw); err != nil {
		return nil, bad("data does not decode: %v", err)
	}
	var list []json.RawMessage
	if len(raw.Elicitations) == 0 || string(raw.Elicitations) == "null" {
		return nil, bad("data has no elicitations array")
	}
	if err := json.Unmarshal(raw.Elicitations, &list); err != nil {
		return nil, bad("elicitations is not an array: %s", Clip(string(raw.Elicitations), 80))
	}
	if len(list) == 0 {
		return nil, bad("elicitations is empty")
	}
	out := make([]ElicitParams, 0, len(list))
	for i, r := range list {
		var p ElicitParams
		if err := json.Unmarshal(r, &p); err != nil || bytes.TrimSpace(r)[0] != '{' {
			return nil, bad("elicitation %d is not an ElicitRequestURLParams object: %s", i+1, Clip(string(r), 80))
		}
		switch {
		case p.Mode == "":
			return nil, bad(`elicitation %d has no mode (form mode), want "url"`, i+1)
		case p.Mode != "url":
			return nil, bad(`elicitation %d has mode %q, want "url"`, i+1, Clip(p.Mode, 40))
		case p.ElicitationID == "":
			return nil, bad("elicitation %d has no elicitationId", i+1)
		case p.URL == "":
			return nil, bad("elicitation %d has no url", i+1)
		}
		if u, err := url.Parse(p.URL); err != nil || !u.IsAbs() || u.Host == "" {
			return nil, bad("elicitation %d: url %q is not an absolute URL", i+1, Clip(p.URL, 120))
		}
		out = append(out, p)
	}
	return out, nil
}

// Clip cuts s to at most n bytes on a rune boundary, marking the cut with
// "…" (for server text quoted in a message).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
