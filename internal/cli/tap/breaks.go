package tap

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	coretap "github.com/sonde-mcp/sonde/tap"
)

// BreakOptions are sonde tap's breakpoint flags (docs/breakpoints.md).
type BreakOptions struct {
	// Breaks, BreaksFile: --break Q (repeatable), --breaks FILE.
	Breaks     []string
	BreaksFile string
	// Timeout: --break-timeout D (0: hold until told).
	Timeout time.Duration
}

func (b *BreakOptions) register(f *pflag.FlagSet) {
	f.StringArrayVar(&b.Breaks, "break", nil, "hold the frames that match QUERY (the filter language, docs/filter.md; e.g. 'dir:in tool:search'; repeatable) until sonde breaks lets them go")
	f.StringVar(&b.BreaksFile, "breaks", "", "read breakpoints from FILE, one query a line ('#' starts a comment)")
	f.DurationVar(&b.Timeout, "break-timeout", hold.DefaultTimeout, "release a held frame unchanged after this long (0: hold until told)")
}

// given reports whether a breakpoint flag was given.
func (b *BreakOptions) given() bool { return len(b.Breaks) > 0 || b.BreaksFile != "" }

// breaksOf builds a stdio run's breakpoints from the flags. A bad query is
// a usage error naming it (and the file's line).
func breaksOf(b *BreakOptions) (*coretap.Breaks, error) {
	timeout, err := b.timeout()
	if err != nil {
		return nil, err
	}
	br := coretap.NewBreaks(hold.Options{Timeout: timeout})
	if err := b.load(br.Engine); err != nil {
		return nil, err
	}
	return br, nil
}

// timeout is --break-timeout as an Engine's: 0 holds until told.
func (b *BreakOptions) timeout() (time.Duration, error) {
	switch {
	case b.Timeout < 0:
		return 0, cmdutil.Usagef("--break-timeout must be 0 (hold until told) or more")
	case b.Timeout == 0:
		return hold.Forever, nil
	}
	return b.Timeout, nil
}

// load adds the breakpoints of --break and --breaks to e; a bad query is
// a usage error naming it (and the file's line).
func (b *BreakOptions) load(e *hold.Engine) error {
	var r io.Reader
	if b.BreaksFile != "" {
		f, err := os.Open(b.BreaksFile)
		if err != nil {
			return cmdutil.Usagef("--breaks: " + err.Error())
		}
		defer f.Close()
		r = f
	}
	if err := e.Load(b.Breaks, b.BreaksFile, r); err != nil {
		return cmdutil.Usagef(err.Error())
	}
	return nil
}

// noteBreaks writes the breakpoints at the start of the recording.
func noteBreaks(obs *client.Observer, e *hold.Engine) {
	if obs == nil || e == nil {
		return
	}
	for _, b := range e.Breakpoints() {
		obs.Note(fmt.Sprintf("breakpoint %d: %s", b.N, b.Expr), time.Now())
	}
}

// breaksAnswer answers a sonde/breaks/* request from the tap's
// breakpoints; a change of the breakpoints is noted in the recording.
func (c *control) breaksAnswer(msg jsonrpc.Message) ([]byte, error) {
	if c.breaks == nil {
		return jsonrpc.EncodeError(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "sonde tap: this session takes no breakpoints (an HTTP tap, or one started before sonde had them)"})
	}
	st, rpcErr := c.breaks.Control(client.HoldBySocket, msg.Method, msg.Params)
	if rpcErr != nil {
		return jsonrpc.EncodeError(msg.ID, rpcErr)
	}
	switch msg.Method {
	case hold.MethodAdd, hold.MethodRemove, hold.MethodEnable:
		if c.obs != nil {
			c.obs.Note(fmt.Sprintf("breakpoints changed by a watcher (sonde breaks, %s %s): %s", msg.Method, compactParams(msg.Params), breakList(st.Breakpoints)), time.Now())
		}
	}
	res, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return jsonrpc.EncodeResult(msg.ID, res)
}

func compactParams(p json.RawMessage) string {
	if len(p) == 0 {
		return "{}"
	}
	return string(p)
}

// breakList is the breakpoints in words, for a note.
func breakList(bps []hold.Breakpoint) string {
	if len(bps) == 0 {
		return "none"
	}
	parts := make([]string, len(bps))
	for i, b := range bps {
		state := ""
		if !b.Enabled {
			state = " (off)"
		}
		parts[i] = fmt.Sprintf("%d %s%s", b.N, b.Expr, state)
	}
	return strings.Join(parts, "; ")
}

// watch makes a connection a watcher of the breakpoints (breakWatcher).
func (c *control) watch() func() {
	if c.breaks == nil {
		return func() {}
	}
	return c.breaks.Attach()
}

// BreaksOptions are the flags of sonde breaks.
type BreaksOptions struct {
	Session string
	JSON    bool
	Timeout time.Duration
	Dir     string // the sessions folder (tests)
	// All: release --all; Edit: edit --json FILE|-; Result, Error: answer.
	All    bool
	Edit   string
	Result string
	Error  string
}

const breaksLong = `List the breakpoints of a live session of sonde tap, replay --serve --break, or call or script --break (--session: its id or the start of one;
default: the newest live session) and the frames they hold, or change them while the host
keeps talking (docs/breakpoints.md). A breakpoint is a query of the filter language
(docs/filter.md), judged as --filter judges a frame: a response by its request, so tool: and
method: work on answers; dir:in is what comes from the server, dir:out what goes to it.
A held frame waits, under a handle (h1, h2, …), until it is released, edited, dropped or
answered, or --break-timeout passed (then it goes on unchanged).

  sonde breaks                                 breakpoints, then the frames held
  sonde breaks --json                          one JSON object per held frame, a line each
  sonde breaks add 'dir:in tool:search'        sonde breaks rm 1 | on 1 | off 1
  sonde breaks release h2 h1                   in that order (or --all)
  sonde breaks drop h3                         never sent: its receiver never sees it
  sonde breaks edit h1 --json answer.json      the whole new message (- reads stdin)
  sonde breaks answer h4 --result '{"content":[]}'   a held request, answered in the
  sonde breaks answer h4 --error -32000:nope         server's place: the server never sees it

Exit status: 0; 2 for a usage error, no live session, a session without breakpoints, no frame
held under that handle, an edit or answer refused (the frame stays held; the message says why,
with the byte offset of a JSON error), answer of a frame that is not a request, or a wrong
breakpoint; 4 when the tap did not answer within --timeout; 5 when the tap went away first, or
the decision was taken but its frame could not be sent (its stream is gone).`

// NewCmdBreaks is `sonde breaks`.
func NewCmdBreaks(env *cmdutil.Env) *cobra.Command {
	var o BreaksOptions
	run := func(method string, params func(args []string) (any, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			p, err := params(args)
			if err != nil {
				return err
			}
			return RunBreaks(env, &o, method, p)
		}
	}
	none := func([]string) (any, error) { return nil, nil }
	cmd := &cobra.Command{
		Use:   "breaks [--session SESSION] [--json]",
		Short: "List the breakpoints and held frames of a live sonde tap session, or release, edit, drop or answer them",
		Long:  breaksLong,
		Args:  cobra.NoArgs,
		RunE:  run(hold.MethodList, none),
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.Session, "session", "", "the session's `ID` (or the start of one); default: the newest live session")
	pf.BoolVar(&o.JSON, "json", false, "print JSON: one object per held frame, a line each (handle, breakpoint, direction, kind, method, tool, id, held_ms, timeout_ms, left_ms, frame)")
	pf.DurationVar(&o.Timeout, "timeout", 10*time.Second, "how long to wait for the tap's answer")

	num := func(what string) func([]string) (any, error) {
		return func(args []string) (any, error) {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return nil, cmdutil.Usagef(fmt.Sprintf("sonde breaks %s %s: want a breakpoint number (1, 2, …; sonde breaks lists them)", what, args[0]))
			}
			switch what {
			case "on":
				return map[string]any{"n": n, "enabled": true}, nil
			case "off":
				return map[string]any{"n": n, "enabled": false}, nil
			}
			return map[string]any{"n": n}, nil
		}
	}
	sub := func(use, short string, args cobra.PositionalArgs, method string, params func([]string) (any, error)) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: args, RunE: run(method, params), ValidArgsFunction: cobra.NoFileCompletions}
		if strings.Contains(use, "HANDLE") {
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return heldHandles(&o), cobra.ShellCompDirectiveNoFileComp
			}
		}
		cmd.AddCommand(c)
		return c
	}
	sub("add QUERY", "Add a breakpoint (a filter query, e.g. 'dir:in tool:search')", cobra.ExactArgs(1), hold.MethodAdd,
		func(a []string) (any, error) { return map[string]any{"expr": a[0]}, nil })
	sub("rm N", "Delete breakpoint N (the frames it holds stay held)", cobra.ExactArgs(1), hold.MethodRemove, num("rm"))
	sub("on N", "Turn breakpoint N on", cobra.ExactArgs(1), hold.MethodEnable, num("on"))
	sub("off N", "Turn breakpoint N off (the frames it holds stay held)", cobra.ExactArgs(1), hold.MethodEnable, num("off"))
	rel := sub("release HANDLE... | --all", "Let held frames go on unchanged, in the order given", cobra.ArbitraryArgs, hold.MethodRelease,
		func(a []string) (any, error) {
			switch {
			case o.All && len(a) > 0:
				return nil, cmdutil.Usagef("sonde breaks release: handles or --all, not both")
			case o.All:
				return map[string]any{"all": true}, nil
			case len(a) == 0:
				return nil, cmdutil.Usagef("sonde breaks release: name the handles (h1 h2 …) or --all")
			}
			return map[string]any{"handles": a}, nil
		})
	rel.Flags().BoolVar(&o.All, "all", false, "release every frame held")
	sub("drop HANDLE", "Never send a held frame (its receiver never sees it)", cobra.ExactArgs(1), hold.MethodDrop,
		func(a []string) (any, error) { return map[string]any{"handle": a[0]}, nil })
	edit := sub("edit HANDLE --json FILE|-", "Send a new message in place of a held frame", cobra.ExactArgs(1), hold.MethodEdit,
		func(a []string) (any, error) { return editParams(env, &o, a[0]) })
	edit.Flags().StringVar(&o.Edit, "json", "", "the whole new JSON-RPC message: a `FILE`, or - for stdin")
	_ = edit.MarkFlagRequired("json")
	ans := sub("answer HANDLE (--result JSON | --error CODE[:MESSAGE])", "Answer a held request in its receiver's place", cobra.ExactArgs(1), hold.MethodAnswer,
		func(a []string) (any, error) { return answerParams(&o, a[0]) })
	ans.Flags().StringVar(&o.Result, "result", "", "the answer's result, a JSON value")
	ans.Flags().StringVar(&o.Error, "error", "", "answer with a JSON-RPC error instead: `CODE[:MESSAGE]`")
	return cmd
}

// editParams reads the edit of sonde breaks edit (--json FILE, or - for
// stdin; at most hold.MaxEditBytes).
func editParams(env *cmdutil.Env, o *BreaksOptions, handle string) (any, error) {
	var r io.Reader = env.In
	if o.Edit != "-" {
		f, err := os.Open(o.Edit)
		if err != nil {
			return nil, cmdutil.Usagef("sonde breaks edit --json: " + err.Error())
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, hold.MaxEditBytes+1))
	if err != nil {
		return nil, cmdutil.Usagef("sonde breaks edit --json: " + err.Error())
	}
	if len(b) > hold.MaxEditBytes {
		return nil, cmdutil.Usagef(fmt.Sprintf("sonde breaks edit: the edit is over the %d bytes allowed; %s stays held", hold.MaxEditBytes, handle))
	}
	if !json.Valid(b) {
		return nil, errBadJSON(b, handle)
	}
	return map[string]any{"handle": handle, "frame": json.RawMessage(b)}, nil
}

// errBadJSON says where b stops being JSON (the tap would refuse it the
// same way; it is not sent).
func errBadJSON(b []byte, handle string) error {
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return cmdutil.Usagef(fmt.Sprintf("sonde breaks edit: the edit is not JSON: %v at byte %d; %s stays held", se, se.Offset, handle))
	}
	return cmdutil.Usagef(fmt.Sprintf("sonde breaks edit: the edit is not JSON: %v; %s stays held", err, handle))
}

// answerParams builds the params of sonde breaks answer.
func answerParams(o *BreaksOptions, handle string) (any, error) {
	switch {
	case (o.Result == "") == (o.Error == ""):
		return nil, cmdutil.Usagef("sonde breaks answer: give --result JSON or --error CODE[:MESSAGE]")
	case o.Result != "":
		if !json.Valid([]byte(o.Result)) {
			return nil, cmdutil.Usagef(fmt.Sprintf("sonde breaks answer --result: not JSON; %s stays held", handle))
		}
		return map[string]any{"handle": handle, "result": json.RawMessage(o.Result)}, nil
	}
	codeText, msg, _ := strings.Cut(o.Error, ":")
	code, err := strconv.ParseInt(codeText, 10, 64)
	if err != nil {
		return nil, cmdutil.Usagef(fmt.Sprintf("sonde breaks answer --error %q: want CODE[:MESSAGE], e.g. -32000:not today", o.Error))
	}
	if msg == "" {
		msg = "answered by sonde breaks"
	}
	return map[string]any{"handle": handle, "error": map[string]any{"code": code, "message": msg}}, nil
}

// RunBreaks sends one sonde/breaks/* request to a live session and prints
// the state it answers.
func RunBreaks(env *cmdutil.Env, o *BreaksOptions, method string, params any) error {
	path, _, err := watchTarget("sonde breaks", &WatchOptions{Dir: o.Dir}, o.Session)
	if err != nil {
		return err
	}
	line, err := requestLine(method, params)
	if err != nil {
		return err
	}
	msg, err := askSession(path, line, o.Timeout, "sonde breaks", "is it live, a tap recording in the sessions folder?")
	if err != nil {
		return err
	}
	if msg.Error != nil {
		return breaksError(msg.Error)
	}
	var st hold.State
	if err := json.Unmarshal(msg.Result, &st); err != nil {
		return &client.Error{Code: client.CodeProtocol, Message: "sonde breaks: the tap's answer is not a list of breakpoints: " + err.Error(), Err: client.ErrProtocol}
	}
	if o.JSON {
		for _, h := range st.Held {
			b, err := json.Marshal(h)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Out, string(b))
		}
		return nil
	}
	return printBreaks(env.Out, st)
}

// breaksError is the error of a refusal of the tap (docs/errors.md): a
// frame that could not be sent is exit 5, the others usage errors.
func breaksError(e *jsonrpc.Error) error {
	if e.Code == hold.CodeUndelivered {
		return &client.Error{Code: client.CodeProcessExit, Message: "sonde breaks: " + e.Message, RPC: e}
	}
	return cmdutil.Usagef("sonde breaks: " + e.Message)
}

// printBreaks prints the breakpoints, then the frames held.
func printBreaks(w io.Writer, st hold.State) error {
	tw := cmdutil.NewTable(w)
	fmt.Fprintf(tw, "BREAK\tSTATE\tHITS\tQUERY\n")
	for _, b := range st.Breakpoints {
		state := "on"
		if !b.Enabled {
			state = "off"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", b.N, state, b.Hits, textfmt.Escape(b.Expr))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.Held) == 0 {
		fmt.Fprintln(w, "nothing held")
		return nil
	}
	fmt.Fprintln(w)
	tw = cmdutil.NewTable(w)
	fmt.Fprintf(tw, "HELD\tBREAK\tDIR\tKIND\tID\tMETHOD\tHELD FOR\tLEFT\n")
	for _, h := range st.Held {
		left := "until told"
		if h.TimeoutMS > 0 {
			left = (time.Duration(h.LeftMS) * time.Millisecond).String()
		}
		method := h.Method
		if h.Tool != "" {
			method += " " + h.Tool
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%v\t%s\n", h.Handle, h.Breakpoint, h.Direction, h.Kind, textfmt.Escape(h.ID), textfmt.Escape(method),
			time.Duration(h.HeldMS)*time.Millisecond, left)
	}
	return tw.Flush()
}

// heldHandles are the handles the session holds now, each with what it
// holds, for shell completion (none when the session cannot be asked).
func heldHandles(o *BreaksOptions) []string {
	path, _, err := watchTarget("sonde breaks", &WatchOptions{Dir: o.Dir}, o.Session)
	if err != nil {
		return nil
	}
	line, err := requestLine(hold.MethodList, nil)
	if err != nil {
		return nil
	}
	msg, err := askSession(path, line, 2*time.Second, "sonde breaks", "")
	if err != nil || msg.Error != nil {
		return nil
	}
	var st hold.State
	if json.Unmarshal(msg.Result, &st) != nil {
		return nil
	}
	out := make([]string, 0, len(st.Held))
	for _, h := range st.Held {
		out = append(out, fmt.Sprintf("%s\t%s %s id %s %s", h.Handle, h.Direction, h.Kind, h.ID, h.Method))
	}
	return out
}
