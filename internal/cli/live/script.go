package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
)

// scriptLine is one input line of `sonde script`.
type scriptLine struct {
	Method        string          `json:"method"`
	Params        json.RawMessage `json:"params,omitempty"`
	DelayMS       int64           `json:"delay_ms,omitempty"`
	TimeoutMS     int64           `json:"timeout_ms,omitempty"`
	CancelAfterMS int64           `json:"cancel_after_ms,omitempty"`
}

// scriptResult is one output line of `sonde script`.
type scriptResult struct {
	Index  int             `json:"index"`
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  any             `json:"error,omitempty"`
	MS     float64         `json:"ms"`
}

// ScriptOptions are the flags of `sonde script`.
type ScriptOptions struct {
	Server connect.Flags
	// Breaks are --break, --breaks and --break-timeout (docs/breakpoints.md).
	Breaks connect.BreakFlags
}

// NewCmdScript is `sonde script FILE`; serve gives its breakpoints their
// socket (internal/cli/tap.ServeEngine).
func NewCmdScript(env *cmdutil.Env, serve connect.BreakServer) *cobra.Command {
	var o ScriptOptions
	cmd := &cobra.Command{
		Use:   "script FILE (-- COMMAND [ARG...] | --url URL)",
		Short: "Send pipelined requests from a JSONL file (- for stdin)",
		Long: `Run the handshake, then send one request per input line, without waiting for answers
(each line's delay_ms is waited before it is sent). Input lines:

  {"method":"tools/call","params":{"name":"echo","arguments":{"value":"hi"}},
   "delay_ms":0,"timeout_ms":5000,"cancel_after_ms":100}

Only method is required. Blank lines and lines starting with # are skipped. Output is one
JSON line per input line, in input order, as soon as that line and every earlier one
have their outcome:

  {"index":0,"id":2,"method":"tools/call","ok":true,"result":{...},"ms":1.2}
  {"index":1,"id":3,"method":"tools/call","ok":false,"error":{"code":"MCP_TIMEOUT","message":"..."},"ms":5000.3}

(rpc_code is added to the error for MCP_ERROR, and for MCP_URL_REQUIRED the elicitations,
whose URLs are also printed on stderr.) The exit status is 1 when any line failed.

--break Q (repeatable), --breaks FILE, --break-timeout D hold the frames that match, as in
sonde call (sonde breaks --session script acts on them; docs/breakpoints.md).

` + cmdutil.ExitCodesSee,
		RunE: func(cmd *cobra.Command, args []string) error {
			own, t, err := connect.Resolve(cmd, &o.Server, args, 1, "script takes exactly one FILE (or -) before --")
			if err != nil {
				return err
			}
			lines, err := readScript(own[0], env.In)
			if err != nil {
				return err
			}
			// A failure to connect is not reported on stdout, whose lines
			// are the script's.
			held, err := o.Breaks.Headless(env, serve, "script")
			if err != nil {
				return err
			}
			defer held.Close()
			s, err := connect.OpenHeld(cmd.Context(), env, &o.Server, t, held)
			if err != nil {
				return err
			}
			defer s.Close()
			return runScript(cmd.Context(), env, s.Client, lines)
		},
	}
	o.Server.Register(cmd.Flags())
	o.Breaks.Register(cmd.Flags())
	return cmd
}

// readScript reads and validates every line before anything is sent, so a
// typo on line 40 does not leave 39 requests half-run.
func readScript(path string, stdin io.Reader) ([]scriptLine, error) {
	var r io.Reader = stdin
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return nil, cmdutil.Usagef("script: " + err.Error())
		}
		defer fh.Close()
		r = fh
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxScriptLine)
	var lines []scriptLine
	n := 0
	for n = 1; sc.Scan(); n++ {
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 || bytes.TrimSpace(text)[0] == '#' {
			continue
		}
		var l scriptLine
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, cmdutil.Usagef(fmt.Sprintf("script line %d: %v", n, err))
		}
		if rest := bytes.TrimSpace(text[dec.InputOffset():]); len(rest) > 0 {
			return nil, cmdutil.Usagef(fmt.Sprintf("script line %d: unexpected data after the JSON object: %.40s", n, rest))
		}
		if l.Method == "" {
			return nil, cmdutil.Usagef(fmt.Sprintf("script line %d: \"method\" is required", n))
		}
		if l.DelayMS < 0 || l.TimeoutMS < 0 || l.CancelAfterMS < 0 {
			return nil, cmdutil.Usagef(fmt.Sprintf("script line %d: delay_ms, timeout_ms and cancel_after_ms must not be negative", n))
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, cmdutil.Usagef(fmt.Sprintf("script line %d: longer than %d bytes (the limit of a script line)", n, maxScriptLine))
	} else if err != nil {
		return nil, cmdutil.Usagef("script: " + err.Error())
	}
	return lines, nil
}

// maxScriptLine is the longest line a script may have (64 MiB).
const maxScriptLine = 64 << 20

// runScript sends the lines and prints one output line per input line on
// env.Out; the URLs of a line that failed with MCP_URL_REQUIRED are printed
// on env.Err as it is.
func runScript(ctx context.Context, env *cmdutil.Env, c *client.Client, lines []scriptLine) error {
	w := env.Out
	calls := make([]*client.Call, len(lines))
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	sent := make(chan int, len(lines))
	go func() {
		defer close(sent)
		for i, l := range lines {
			if l.DelayMS > 0 && !sleepCtx(ctx, time.Duration(l.DelayMS)*time.Millisecond) {
				return
			}
			callCtx := ctx
			if l.CancelAfterMS > 0 {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithCancel(ctx)
				cancels = append(cancels, cancel)
				time.AfterFunc(time.Duration(l.CancelAfterMS)*time.Millisecond, cancel)
			}
			var params any
			if len(l.Params) > 0 {
				params = l.Params
			}
			calls[i] = c.Go(callCtx, l.Method, params, client.CallOptions{Timeout: time.Duration(l.TimeoutMS) * time.Millisecond})
			sent <- i
		}
	}()
	failed := 0
	for i := range sent {
		call := calls[i]
		raw, err := call.Wait()
		out := scriptResult{Index: i, Method: call.Method, OK: err == nil, Result: raw, MS: ms(call.Latency())}
		if n, ok := call.ID.Int64(); ok {
			out.ID = &n
		}
		if err != nil {
			failed++
			out.Result = nil
			out.Error = env.ErrorJSON(err)
		}
		cmdutil.PrintURLElicitations(env.Err, err, env.ServerName())
		cmdutil.WriteJSON(w, out)
	}
	if ctx.Err() != nil {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "script interrupted"}
	}
	if failed > 0 {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: strconv.Itoa(failed) + " of " + strconv.Itoa(len(lines)) + " script lines failed"}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
