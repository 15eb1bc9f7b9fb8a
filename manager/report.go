package manager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
)

// ReportFile is the name of the last failure report in the state folder.
const ReportFile = "last-report.json"

// Redacted replaces a value a report must not show.
const Redacted = "«redacted»"

// Report is what helps with a failure and leaks nothing: the server's
// identity and hash, the protocol version, the method and request id, the
// phase, the stable code, the duration, a cut and scrubbed stderr summary
// and the exit status. It holds no argument or content unless asked for
// (Arguments), and then redacted; every string value of the arguments is
// also scrubbed from the message and the stderr summary (a server that
// echoes its input does not leak it here).
type Report struct {
	Time     time.Time `json:"time"`
	Server   string    `json:"server"`
	Where    string    `json:"where,omitempty"`
	Hash     string    `json:"hash"`
	Identity string    `json:"identity,omitempty"` // serverInfo name and version
	Protocol string    `json:"protocol_version,omitempty"`
	Method   string    `json:"method"`
	Tool     string    `json:"tool,omitempty"`
	ID       string    `json:"id,omitempty"`
	Phase    Phase     `json:"phase"`
	Code     string    `json:"code"`
	RPCCode  *int64    `json:"rpc_code,omitempty"`
	Message  string    `json:"message"`
	Reason   string    `json:"reason,omitempty"`
	// Uncertain: the tool has side effects and may have run.
	Uncertain  bool    `json:"uncertain,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Exit       string  `json:"exit,omitempty"`
	Stderr     string  `json:"stderr,omitempty"`
	// StderrDropped counts the stderr bytes not in the tail.
	StderrDropped int64 `json:"stderr_dropped,omitempty"`
	// Arguments are the call's arguments, with every value redacted
	// (ReportOptions.Arguments); absent otherwise.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ReportOptions say what a report may hold beyond the default.
type ReportOptions struct {
	// Arguments adds the call's argument names, their values redacted.
	Arguments bool
	// StderrLines is how many final stderr lines are kept (default 5), each
	// cut at 200 bytes.
	StderrLines int
}

// Report builds the failure report of a failed call (err from Call) whose
// arguments were args.
func (m *Manager) Report(err error, args any, o ReportOptions) *Report {
	var ce *CallError
	if !errors.As(err, &ce) {
		return nil
	}
	var f Failure
	m.mu.Lock()
	if s := m.servers[ce.Server]; s != nil {
		f = Failure{Where: s.spec.Where, Hash: s.hash, Init: s.init, Exit: s.exit, Hide: s.spec.Hide}
	}
	m.mu.Unlock()
	return BuildReport(ce, f, args, o)
}

// Failure is what a report says of the server besides the call's error:
// where it was found, its hash, its handshake and its last exit (when the
// error carries none).
type Failure struct {
	Where, Hash string
	Init        *mcp.InitializeResult
	Exit        *client.Exit
	// Hide are the server's secret values (Spec.Hide), scrubbed like the
	// arguments' strings.
	Hide []string
}

// BuildReport is the failure report of ce with what is known of its
// server: the one rule of a call through the manager (Report) and of a
// call on one server's own client (sonde call TOOL -- CMD). The values of
// args never appear in it.
func BuildReport(ce *CallError, f Failure, args any, o ReportOptions) *Report {
	if o.StderrLines <= 0 {
		o.StderrLines = 5
	}
	secrets := argStrings(args)
	for _, h := range f.Hide {
		if h != "" {
			secrets = append(secrets, h)
		}
	}
	r := &Report{
		Time: time.Now().UTC(), Server: ce.Server, Tool: ce.Tool, ID: ce.ID, Phase: ce.Phase,
		Method: "tools/call", Code: string(client.CodeOf(ce.Err)), Uncertain: ce.Uncertain,
		DurationMS: float64(ce.Duration.Microseconds()) / 1000,
		Message:    scrub(mcp.Clip(ce.Err.Error(), 1000), secrets),
		Where:      f.Where, Hash: f.Hash,
	}
	if r.Code == "" {
		r.Code = "MCP_ERROR"
	}
	if ce.Phase == PhaseStart {
		r.Method = "initialize"
	}
	if ce.Reason != nil {
		r.Reason = scrub(ce.Reason.Error(), secrets)
	}
	x := f.Exit
	var e *client.Error
	if errors.As(ce.Err, &e) {
		if e.RPC != nil {
			code := e.RPC.Code
			r.RPCCode = &code
		}
		if e.Exit != nil {
			x = e.Exit
		}
	}
	if f.Init != nil {
		r.Identity = strings.TrimSpace(f.Init.ServerInfo.Name + " " + f.Init.ServerInfo.Version)
		r.Protocol = f.Init.ProtocolVersion
	}
	if x != nil {
		r.Exit = x.Status()
		r.Stderr = scrub(tailLines(x.Stderr, o.StderrLines, 200), secrets)
		r.StderrDropped = x.StderrDropped
	}
	if o.Arguments {
		r.Arguments = redactArgs(args)
	}
	return r
}

// ServerReport is the failure report of server name's last failure in
// this run (a start that failed, or a process that ended by itself), nil
// when it has none.
func (m *Manager) ServerReport(name string) *Report {
	m.mu.Lock()
	s := m.servers[name]
	if s == nil || s.lastErr == nil {
		m.mu.Unlock()
		return nil
	}
	ce := &CallError{Server: name, Phase: s.phase, Err: s.lastErr}
	m.mu.Unlock()
	r := m.Report(ce, nil, ReportOptions{})
	if ce.Phase == PhaseExit {
		r.Method = ""
	}
	return r
}

// WriteReport writes r as indented JSON to path (mode 0600, its folder
// made 0700).
func WriteReport(path string, r *Report) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// ReadReport reads a report written by WriteReport.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a failure report: %w", path, err)
	}
	return &r, nil
}

// WriteText prints r for a person, one field a line. The caller passes w
// through textfmt when it is a terminal (the message and stderr are the
// server's text).
func (r *Report) WriteText(w io.Writer) {
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-10s %s\n", k+":", v)
		}
	}
	line("time", r.Time.Format(time.RFC3339))
	line("server", strings.TrimSpace(r.Server+"  "+r.Where))
	line("identity", r.Identity)
	line("hash", r.Hash)
	line("protocol", r.Protocol)
	req := r.Method
	if r.Tool != "" {
		req += " " + r.Tool
	}
	if r.ID != "" {
		req += " id " + r.ID
	}
	line("request", req)
	line("phase", string(r.Phase))
	code := r.Code
	if r.RPCCode != nil {
		code += " (" + strconv.FormatInt(*r.RPCCode, 10) + ")"
	}
	line("code", code)
	line("message", r.Message)
	line("reason", r.Reason)
	if r.Uncertain {
		line("execution", "uncertain: the tool is not read-only and may have run")
	}
	if r.DurationMS > 0 {
		line("duration", strconv.FormatFloat(r.DurationMS, 'f', 1, 64)+"ms")
	}
	line("exit", r.Exit)
	if r.Stderr != "" {
		fmt.Fprintln(w, "stderr:")
		for _, l := range strings.Split(r.Stderr, "\n") {
			fmt.Fprintln(w, "  "+l)
		}
		if r.StderrDropped > 0 {
			fmt.Fprintf(w, "  (%d earlier bytes not kept)\n", r.StderrDropped)
		}
	}
	if len(r.Arguments) > 0 {
		line("arguments", string(r.Arguments))
	}
}

// argStrings are the string values in args (at any depth), and the text of
// its numbers, longest first: what a report scrubs.
func argStrings(args any) []string {
	raw, err := rawArgs(args)
	if err != nil || len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) >= 3 {
				out = append(out, x)
			}
		case float64:
			if s := strconv.FormatFloat(x, 'f', -1, 64); len(s) >= 4 {
				out = append(out, s)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub replaces each secret in s (as is, and as JSON-escaped) by Redacted.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
		if q, err := json.Marshal(sec); err == nil {
			if inner := string(q[1 : len(q)-1]); inner != sec {
				s = strings.ReplaceAll(s, inner, Redacted)
			}
		}
	}
	return s
}

// redactArgs keeps the arguments' shape (names, nesting) with every leaf
// value replaced by Redacted.
func redactArgs(args any) json.RawMessage {
	raw, err := rawArgs(args)
	if err != nil || len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return json.RawMessage(`"` + Redacted + `"`)
	}
	var red func(any) any
	red = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = red(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = red(e)
			}
			return x
		}
		return Redacted
	}
	b, _ := json.Marshal(red(v))
	return b
}

// tailLines is the last n non-empty lines of b, each cut at max bytes.
func tailLines(b []byte, n, max int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < n; i-- {
		if l := strings.TrimRight(lines[i], "\r"); strings.TrimSpace(l) != "" {
			keep = append([]string{mcp.Clip(l, max)}, keep...)
		}
	}
	return strings.Join(keep, "\n")
}
