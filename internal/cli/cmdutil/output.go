package cmdutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/manager"
	"github.com/sonde-mcp/sonde/mcp"
)

// PrintResult prints a tool result for a person.
func PrintResult(w io.Writer, r *mcp.CallToolResult) {
	texts := 0
	for _, c := range r.Content {
		switch c.Type {
		case "text":
			texts++
			// Written as it is, not through fmt (whose buffer would copy a
			// large text once more, growing by doubling).
			io.WriteString(w, c.Text)
			io.WriteString(w, "\n")
		case "image", "audio":
			fmt.Fprintf(w, "[%s %s, %d bytes base64]\n", c.Type, c.MimeType, len(c.Data))
		case "resource_link":
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		default:
			fmt.Fprintf(w, "[%s content]\n", c.Type)
		}
	}
	if texts == 0 && len(r.StructuredContent) > 0 {
		fmt.Fprintln(w, IndentJSON(r.StructuredContent))
	}
}

// IndentJSON is raw indented by two spaces (raw itself when it is not
// JSON).
func IndentJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// WriteJSON writes v on w as one JSON line, in one write (without fmt's
// copies, which a large result would feel).
func WriteJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}

// WriteResultJSON writes {"ok": ok, "result": raw} on w as one JSON line:
// raw as the server wrote it, compacted only when it has whitespace
// outside its strings (null when empty). A result that is compact
// already (a server's answer nearly always is) is written from the line
// it was read in, not encoded again into a buffer that grows to hold it.
func WriteResultJSON(w io.Writer, ok bool, raw json.RawMessage) {
	head := `{"ok":false,"result":`
	if ok {
		head = `{"ok":true,"result":`
	}
	switch {
	case len(raw) == 0:
		raw = json.RawMessage("null")
	case !compactJSON(raw):
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			WriteJSON(w, map[string]any{"ok": ok, "result": raw}) // not JSON: as before
			return
		}
		raw = buf.Bytes()
	}
	io.WriteString(w, head)
	w.Write(raw)
	io.WriteString(w, "}\n")
}

// compactJSON reports whether raw (valid JSON) has no whitespace outside
// its strings, that is whether json.Compact would leave it as it is.
func compactJSON(raw []byte) bool {
	in, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// ErrorJSON is the error object of --json output, its message with the
// run's secrets hidden (HideSecrets: a config reference's value in a URL
// the transport's message quotes).
func (e *Env) ErrorJSON(err error) map[string]any {
	m := errorJSON(err)
	if msg, ok := m["message"].(string); ok {
		m["message"] = e.Hidden(msg)
	}
	return m
}

// errorJSON is the error object of --json output, as the error says it.
func errorJSON(err error) map[string]any {
	e := map[string]any{"code": string(client.CodeOf(err)), "message": err.Error()}
	var ce *client.Error
	if errors.As(err, &ce) {
		e["message"] = ce.Message
		if ce.RPC != nil {
			e["rpc_code"] = ce.RPC.Code
			if len(ce.RPC.Data) > 0 {
				e["data"] = ce.RPC.Data
			}
		}
		if els := ElicitationsJSON(err); els != nil {
			e["elicitations"] = els
		}
		if ce.Snapshot != nil {
			e["snapshot"] = ce.Snapshot // what sonde saw at the deadline (MCP_TIMEOUT)
		}
		if a := client.Authorization(err); a != nil {
			e["auth"] = a // what discovery found after a 401 (oauth.Discovery)
		}
	}
	var call *manager.CallError
	if errors.As(err, &call) {
		if call.Uncertain {
			e["uncertain"] = true // a tool with side effects may have run
		}
		if call.Reason != nil {
			e["reason"] = string(call.Reason.Kind)
		}
	}
	return e
}

// JSONFailure also reports err on stdout when --json is set, so a script
// reading stdout sees the failure; the error is returned for stderr and
// the exit status.
func (e *Env) JSONFailure(asJSON bool, err error) error {
	if asJSON && client.CodeOf(err) != "" {
		WriteJSON(e.Out, map[string]any{"ok": false, "error": e.ErrorJSON(err)})
	}
	return err
}

// FirstLine is the first line of s, trimmed.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// NonNil makes an empty list print as [] in JSON.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Table is a tabwriter whose lines lose their trailing spaces (an empty
// last column leaves none).
type Table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// NewTable is a Table writing on w when flushed.
func NewTable(w io.Writer) *Table {
	t := &Table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	return t
}

// Flush aligns the columns and writes the lines.
func (t *Table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(t.buf.String(), "\n") {
		if line == "" {
			continue
		}
		if _, err := fmt.Fprintln(t.out, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	t.buf.Reset()
	return nil
}

// PrintSnapshot prints the snapshot of an MCP_TIMEOUT error (what the
// server was doing at the deadline), one labelled line each, indented
// under the error's own line. It prints nothing for other errors.
func PrintSnapshot(w io.Writer, err error) {
	s := client.TimeoutSnapshot(err)
	if s == nil {
		return
	}
	for _, l := range s.Lines() {
		fmt.Fprintln(w, "  "+l)
	}
}
