package tap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// SocketExt names a live session's socket: the recording's name with it
// in place of .jsonl, in the sessions folder (0700).
const SocketExt = ".sock"

// maxInjectLine bounds a request a watcher sends through the socket, and
// maxInjectWaiting the requests of one connection waiting for their answer
// (past it, the next line is read once one is answered).
const (
	maxInjectLine    = 1 << 20
	maxInjectWaiting = 64
)

// socketPath is the socket of the recording at recPath.
func socketPath(recPath string) string {
	return strings.TrimSuffix(recPath, cmdutil.SessionExt) + SocketExt
}

// injectTarget takes a watcher's requests: a stdio tap's
// *coretap.Injector or an HTTP tap's *coretap.Proxy.
type injectTarget interface {
	Inject(ctx context.Context, req []byte) ([]byte, error)
}

// serveInjector listens on the session's socket and hands each request
// line a connection sends to inj, writing back the answer (or a JSON-RPC
// error saying why there is none). It returns a stop function that closes
// the listener, the connections and removes the socket; nil when the
// socket could not be made (said once on errw).
func serveInjector(inj injectTarget, path string, errw io.Writer) func() {
	os.Remove(path) // a socket left by a tap killed with the same pid and second
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintf(errw, "sonde tap: no injection socket (sonde inject will not reach this session): %v\n", err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serveInjectConn(ctx, inj, c)
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				c.Close()
			}()
		}
	}()
	return func() {
		cancel()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		os.Remove(path)
	}
}

// serveInjectConn answers the requests of one connection, each as it
// comes (several may wait at once), until it closes or ctx ends.
func serveInjectConn(ctx context.Context, inj injectTarget, c net.Conn) {
	var wmu sync.Mutex
	var wg sync.WaitGroup
	defer wg.Wait()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), maxInjectLine)
	room := make(chan struct{}, maxInjectWaiting) // no more read while full
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		room <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-room; wg.Done() }()
			answer, err := inj.Inject(ctx, line)
			if err != nil {
				id, _ := jsonrpc.ScanID(line)
				answer, _ = jsonrpc.EncodeError(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "sonde tap: " + err.Error()})
			}
			wmu.Lock()
			defer wmu.Unlock()
			c.Write(append(answer, '\n'))
		}()
	}
}

// InjectOptions are the flags of sonde inject.
type InjectOptions struct {
	Session string
	Params  string
	Timeout time.Duration
	Dir     string // the sessions folder (tests)
}

// NewCmdInject is `sonde inject`.
func NewCmdInject(env *cmdutil.Env) *cobra.Command {
	var o InjectOptions
	cmd := &cobra.Command{
		Use:   "inject METHOD [--params JSON] [--session SESSION]",
		Short: "Send a request of your own into a session sonde tap is running; its answer comes to you, not the host",
		Long: `Send one request into a live session of sonde tap (--session: its id or the start of
one; default: the newest live session) and print the server's answer: the result as JSON,
or the error. The tap writes the request to the server between two of the host's lines,
never inside one, and only after the host's handshake; it goes under an id of the tap's own,
and the tap takes its answer out of what the host would read: the host never sees it. The
recording notes each injected request.

  sonde inject tools/list
  sonde inject tools/call --params '{"name":"echo","arguments":{"value":"hi"}}'
  sonde inject ping --session github-20261201-143007-4242

Over HTTP (sonde tap --listen), the request is a POST of its own to the server, in the host's
session (its Mcp-Session-Id, protocol version and credentials), once the host has opened one;
its answer comes back on that POST. A tap with fault rules (--fault), and one that does not
record in the sessions folder (--record FILE, --no-record), take no injected requests.

Exit status: 0; 2 for a usage error, or no live session that takes requests; 3 when the
server answered with an error; 4 when no answer came within --timeout; 5 when the tap went
away first (docs/errors.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunInject(env, &o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "the session's `ID` (or the start of one); default: the newest live session")
	f.StringVar(&o.Params, "params", "", "the request's params, a JSON object")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Second, "how long to wait for the answer")
	return cmd
}

// RunInject sends one request into a live session and prints its answer.
func RunInject(env *cmdutil.Env, o *InjectOptions, method string) error {
	var params any
	if o.Params != "" {
		var p map[string]any
		if err := json.Unmarshal([]byte(o.Params), &p); err != nil {
			return cmdutil.Usagef(fmt.Sprintf("--params: want a JSON object: %v", err))
		}
		params = json.RawMessage(o.Params)
	}
	path, _, err := watchTarget(&WatchOptions{Dir: o.Dir}, o.Session)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	res, err := injectOnce(ctx, path, method, params)
	var nc noSocketError
	if errors.As(err, &nc) {
		return cmdutil.Usagef(err.Error())
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Out, cmdutil.IndentJSON(res))
	return nil
}

// noSocketError: the session's socket does not answer (the session
// ended, or its tap takes no requests).
type noSocketError struct{ msg string }

func (e noSocketError) Error() string { return e.msg }

// injectOnce sends one request (params may be nil) into the live session
// recorded at path, through its socket, and returns the server's result;
// a JSON-RPC error is MCP_ERROR, no answer before ctx's deadline
// MCP_TIMEOUT, a tap gone before it MCP_PROCESS_EXIT (*client.Error), and
// a socket that does not answer a noSocketError.
func injectOnce(ctx context.Context, path, method string, params any) (json.RawMessage, error) {
	wait := "the deadline"
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl).Round(time.Second).String()
	}
	req := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		req["params"] = params
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, cmdutil.Usagef(fmt.Sprintf("sonde inject: the params: %v", err))
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socketPath(path))
	if err != nil {
		return nil, noSocketError{fmt.Sprintf("sonde inject: the session %s takes no requests (is it live, a tap recording in the sessions folder, without --fault?): %v", strings.TrimSuffix(path, cmdutil.SessionExt), err)}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return nil, &client.Error{Code: client.CodeProcessExit, Message: "sonde inject: the tap went away: " + err.Error(), Err: err}
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	answer, err := br.ReadBytes('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) || ctx.Err() == nil {
				return nil, &client.Error{Code: client.CodeTimeout, Message: "sonde inject: no answer within " + wait, Err: client.ErrTimeout}
			}
			return nil, &client.Error{Code: client.CodeAborted, Message: "sonde inject: given up before the answer", Err: ctx.Err()}
		}
		return nil, &client.Error{Code: client.CodeProcessExit, Message: "sonde inject: the tap went away before the answer: " + err.Error(), Err: err}
	}
	msg, err := jsonrpc.Decode(answer)
	if err != nil {
		return nil, &client.Error{Code: client.CodeProtocol, Message: "sonde inject: the answer is not a JSON-RPC response: " + err.Error(), Err: client.ErrProtocol}
	}
	if msg.Error != nil {
		return nil, &client.Error{Code: client.CodeRemote, Message: fmt.Sprintf("%s: %d %s", method, msg.Error.Code, msg.Error.Message), RPC: msg.Error}
	}
	return msg.Result, nil
}
