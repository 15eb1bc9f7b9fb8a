package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/lint"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// checker checks one server at a time (it is shared by the jobs: it holds
// nothing that changes).
type checker struct {
	hosts    connect.Hosts
	inputs   map[string]string
	timeout  time.Duration
	problems []hostconfig.Problem
	tel      *connect.Telemetry // --otlp-endpoint (nil: none)
}

// newClient is a client for one check, exported with --otlp-endpoint.
func (c *checker) newClient() *client.Client {
	opts := client.Options{Timeout: c.timeout, ClientVersion: cmdutil.Version}
	c.tel.Client(&opts)
	cl := client.New(opts)
	c.tel.Follow(cl)
	return cl
}

// list is the steps of one server as they are run.
type list struct {
	steps []Step
	at    func(string)
}

// begin says which step runs now (the progress line) and returns its start.
func (l *list) begin(name string) time.Time {
	l.at(name)
	return time.Now()
}

// pass adds a step that passed.
func (l *list) pass(name string, start time.Time, detail string) {
	l.steps = append(l.steps, Step{Name: name, OK: true, MS: ms(time.Since(start)), Detail: detail})
}

// fail adds the step that failed; the checklist stops there.
func (l *list) fail(name string, start time.Time, detail, hint string) {
	l.steps = append(l.steps, Step{Name: name, MS: ms(time.Since(start)), Detail: detail, Hint: hint})
}

// hideSecrets replaces, in every step's detail and hint, the values the
// entry's references brought in (Target.Hide): a path, an error or the
// server's stderr may quote the command line.
func hideSecrets(steps []Step, hide []string) []Step {
	for i := range steps {
		for _, h := range hide {
			if h != "" {
				steps[i].Detail = strings.ReplaceAll(steps[i].Detail, h, transport.Redacted)
				steps[i].Hint = strings.ReplaceAll(steps[i].Hint, h, transport.Redacted)
			}
		}
	}
	return steps
}

// noAsk is the Prompter of doctor: it never asks (an input takes its
// --input value or its default).
type noAsk struct{}

func (noAsk) Prompt(hostconfig.Input) (string, error) {
	return "", fmt.Errorf("%w: sonde doctor does not ask (give it with --input ID=VALUE)", hostconfig.ErrCannotAsk)
}

// check runs the checklist of s; at is told each step as it starts.
func (c *checker) check(ctx context.Context, s hostconfig.Server, at func(string)) Result {
	t0 := time.Now()
	r := Result{Server: s.Name, Host: s.Host, Scope: s.Scope, File: s.File, Transport: string(s.Transport), Disabled: s.Disabled}
	l := &list{at: at}
	var hide []string
	if ctx.Err() != nil {
		l.fail("config", time.Now(), "interrupted before this server was checked", "")
	} else if t, ok := c.config(l, s); ok {
		hide = t.Hide
		if t.URL == "" {
			c.stdio(ctx, l, t)
		} else {
			c.http(ctx, l, t)
		}
	}
	r.Steps = hideSecrets(l.steps, hide)
	r.MS = ms(time.Since(t0))
	r.OK = true
	if f := r.failure(); f != nil {
		r.OK, r.Failed = false, f.Name
	}
	at("")
	return r
}

// config is the first step: the entry's problems, and its references
// resolved (variables, inputs, envFile).
func (c *checker) config(l *list, s hostconfig.Server) (*connect.Target, bool) {
	start := l.begin("config")
	for _, p := range c.problems {
		if p.Server == s.Name && p.File == s.File {
			l.fail("config", start, p.Error(), "fix the entry in "+s.File+" (sonde config list shows every problem of the files)")
			return nil, false
		}
	}
	f := &connect.Flags{}
	inputs := make([]string, 0, len(c.inputs))
	for k, v := range c.inputs {
		inputs = append(inputs, k+"="+v)
	}
	f.Inputs = inputs
	_, err := c.hosts.Resolve(s, c.inputs, noAsk{})
	var t *connect.Target
	if err == nil {
		t, err = connect.UseServer(&cobra.Command{}, f, c.hosts, s, noAsk{})
	}
	if err != nil {
		hint := "fix the entry in " + s.File
		var ie *hostconfig.InputError
		switch {
		case errors.As(err, &ie):
			hint = "give the input's value with --input ID=VALUE (the host asks for it when it starts the server)"
		case errors.Is(err, hostconfig.ErrReference):
			hint = "export the variable in the environment the host starts from (a desktop host does not read your shell's profile), give it a default in the entry, or fix the envFile"
		}
		l.fail("config", start, err.Error(), hint)
		return nil, false
	}
	detail := "references resolved"
	if n := len(s.EnvNames()); n > 0 {
		detail += fmt.Sprintf("; env: %s", strings.Join(s.EnvNames(), ", "))
	}
	l.pass("config", start, detail)
	return t, true
}

// events gathers a client's events (subscribed before Connect) until the
// client closes.
type events struct {
	mu   sync.Mutex
	evs  []client.Event
	done <-chan struct{}
}

func follow(c *client.Client) *events {
	e := &events{}
	e.done = client.FollowN(context.Background(), c, 1<<14, e).Done()
	return e
}

// Apply gathers one event (client.Sink).
func (e *events) Apply(ev client.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

// snapshot is the events so far.
func (e *events) snapshot() []client.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]client.Event(nil), e.evs...)
}

// until waits, at most d, for an event that satisfies pred to be
// gathered (or for the client to close), and returns the events so far:
// events are delivered after the call that caused them has returned.
func (e *events) until(pred func(client.Event) bool, d time.Duration) []client.Event {
	deadline := time.Now().Add(d)
	for {
		evs := e.snapshot()
		for _, ev := range evs {
			if pred(ev) {
				return evs
			}
		}
		select {
		case <-e.done:
			return e.snapshot()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return e.snapshot()
		}
	}
}

// all waits for the client to be closed and returns every event.
func (e *events) all() []client.Event {
	<-e.done
	return e.snapshot()
}

// lintFindings runs the protocol rules of sonde lint over the events.
func lintFindings(evs []client.Event) []string {
	lt := lint.New()
	var out []string
	for _, ev := range evs {
		for _, f := range lt.Check(ev) {
			out = append(out, f.Rule+": "+f.Detail)
		}
	}
	return out
}

// handshake is the steps after initialize answered: the protocol
// version, the capabilities, tools/list with the lint findings so far,
// ping. It returns false at a failure.
func (c *checker) handshake(ctx context.Context, l *list, cl *client.Client, res *mcp.InitializeResult, evs *events) bool {
	start := l.begin("protocol")
	if !mcp.IsSupportedVersion(res.ProtocolVersion) {
		l.fail("protocol", start, fmt.Sprintf("the server answered protocol version %q, which sonde does not know (it speaks %s)", res.ProtocolVersion, strings.Join(mcp.SupportedVersions, ", ")),
			"update the server (or its SDK): hosts refuse a version they do not speak")
		return false
	}
	l.pass("protocol", start, fmt.Sprintf("%s (%s %s)", res.ProtocolVersion, textfmt.Clean(res.ServerInfo.Name), textfmt.Clean(res.ServerInfo.Version)))

	start = l.begin("capabilities")
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(res.Capabilities, &caps); err != nil && len(res.Capabilities) > 0 {
		l.fail("capabilities", start, "the capabilities are not a JSON object: "+err.Error(), "fix the server's initialize result")
		return false
	}
	names := make([]string, 0, len(caps))
	for k := range caps {
		names = append(names, k)
	}
	sort.Strings(names)
	detail := "none"
	if len(names) > 0 {
		detail = strings.Join(names, ", ")
	}
	l.pass("capabilities", start, detail)

	if _, hasTools := caps["tools"]; hasTools {
		start = l.begin("tools/list")
		ctx1, cancel := context.WithTimeout(ctx, c.timeout)
		tools, err := cl.ListTools(ctx1)
		cancel()
		if err != nil {
			l.fail("tools/list", start, cmdutil.ErrText(err), hintFor(err))
			return false
		}
		l.pass("tools/list", start, fmt.Sprintf("%d tools", len(tools)))

		start = l.begin("tool schemas")
		if p := schemaProblems(tools); len(p) > 0 {
			l.fail("tool schemas", start, fmt.Sprintf("%d schema problem(s): %s", len(p), strings.Join(firstN(p, 3), " | ")),
				"each tool's inputSchema (and outputSchema) must be a valid JSON Schema of type object: a host may refuse the tool, or the whole server")
			return false
		}
		l.pass("tool schemas", start, fmt.Sprintf("%d tools, each schema valid", len(tools)))
	}

	start = l.begin("ping")
	ctx1, cancel := context.WithTimeout(ctx, c.timeout)
	err := cl.Ping(ctx1)
	cancel()
	if err != nil {
		l.fail("ping", start, cmdutil.ErrText(err), "ping is required of every server; a host may drop a server that does not answer it")
		return false
	}
	l.pass("ping", start, "answered")

	start = l.begin("lint")
	if f := lintFindings(evs.snapshot()); len(f) > 0 {
		l.fail("lint", start, fmt.Sprintf("%d protocol rule(s) broken: %s", len(f), strings.Join(firstN(f, 3), " | ")),
			"see docs/lint.md for each rule; record a session (sonde check --record FILE --server NAME) and run sonde lint FILE")
		return false
	}
	l.pass("lint", start, "no protocol rule broken")
	return true
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// hintFor is the hint for a failed request.
func hintFor(err error) string {
	switch client.CodeOf(err) {
	case client.CodeTimeout:
		return "the server did not answer in time: raise --timeout if it is slow to start, else look at its stderr"
	case client.CodeProcessExit:
		return "the server exited: its stderr says why"
	case client.CodeRemote:
		return "the server answered with an error: its message says why"
	case client.CodeProtocol:
		return "the server broke the protocol: see the detail"
	}
	return ""
}

// cut keeps the last max bytes of s, cleaned for one line of the report.
func cut(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return textfmt.Clean(s)
}
