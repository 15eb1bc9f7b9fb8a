package live

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// echoCheck is --check-echo ARG: every call puts its own token in
// argument ARG, and its result must carry that token and no other call's.
type echoCheck struct {
	arg    string
	prefix string                     // "sonde-bench-RUN-": the token is prefix + the call's number
	args   map[string]json.RawMessage // the tool's arguments, ARG replaced per call
}

// newEchoCheck prepares the check of argument arg over the tool's args (a
// JSON object).
func newEchoCheck(arg string, toolArgs []byte) (*echoCheck, error) {
	e := &echoCheck{arg: arg, args: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(toolArgs)) > 0 {
		if err := json.Unmarshal(toolArgs, &e.args); err != nil {
			return nil, fmt.Errorf("--check-echo: the arguments are not a JSON object: %v", err)
		}
	}
	var run [4]byte
	_, _ = rand.Read(run[:])
	e.prefix = "sonde-bench-" + hex.EncodeToString(run[:]) + "-"
	return e, nil
}

// argsFor is the arguments of call i, its token in ARG.
func (e *echoCheck) argsFor(i int) []byte {
	m := make(map[string]json.RawMessage, len(e.args)+1)
	for k, v := range e.args {
		m[k] = v
	}
	m[e.arg] = json.RawMessage(strconv.Quote(e.prefix + strconv.Itoa(i)))
	b, _ := json.Marshal(m)
	return b
}

// matches reports whether result (a tools/call result) carries call i's
// token and no other call's: in a text content block or in
// structuredContent (decoded, so a server's escapes do not hide it).
func (e *echoCheck) matches(i int, result json.RawMessage) bool {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured any `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil {
		return false
	}
	var hay bytes.Buffer
	for _, c := range r.Content {
		hay.WriteString(c.Text + "\n")
	}
	if r.Structured != nil {
		b, _ := json.Marshal(r.Structured)
		hay.Write(b)
	}
	own := false
	for rest := hay.Bytes(); ; {
		at := bytes.Index(rest, []byte(e.prefix))
		if at < 0 {
			return own
		}
		rest = rest[at+len(e.prefix):]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if got, err := strconv.Atoi(string(rest[:n])); err != nil || got != i {
			return false // another call's token (or a cut one)
		}
		own = true
	}
}
