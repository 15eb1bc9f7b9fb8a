package tap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/sessions"
	coretap "github.com/sonde-mcp/sonde/tap"
)

// SocketExt names a live session's socket: the recording's name with it
// in place of .jsonl, in the sessions folder (0700).
const SocketExt = ".sock"

// maxInjectLine bounds a request a watcher sends through the socket, and
// maxInjectWaiting the requests of one connection waiting for their answer
// (past it, the next line is read once one is answered).
// A line over bigInjectLine (an edit of a held frame can be up to
// hold.MaxEditBytes) is answered before the next is read, so a
// connection holds at most one such line.
const (
	maxInjectLine    = hold.MaxEditBytes + 64<<10
	bigInjectLine    = 1 << 20
	maxInjectWaiting = 64
)

// socketPath is the socket of the recording at recPath.
func socketPath(recPath string) string {
	return strings.TrimSuffix(recPath, sessions.Ext) + SocketExt
}

// injectTarget takes a watcher's requests: a stdio tap's
// *coretap.Injector or an HTTP tap's *coretap.Proxy.
type injectTarget interface {
	Inject(ctx context.Context, req []byte) ([]byte, error)
}

// serveInjector listens on the session's socket (mode 0600, in the
// sessions folder that openRecording checked is the user's alone) and
// hands each request line a connection sends to inj, writing back the
// answer (or a JSON-RPC error saying why there is none). A connection
// from a process of another user is closed unread (the first one said on
// errw). It returns a stop function that closes the listener, the
// connections and removes the socket; nil when the socket could not be
// made (said once on errw).
func serveInjector(inj injectTarget, path string, errw io.Writer) func() {
	os.Remove(path) // a socket left by a tap killed with the same pid and second
	ln, err := listenPrivate(path)
	if err != nil {
		fmt.Fprintf(errw, "sonde tap: no injection socket (sonde inject will not reach this session): %v\n", err)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	refused := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := checkPeer(c, "sonde tap"); err != nil {
				c.Close()
				if !refused {
					refused = true
					fmt.Fprintf(errw, "%v (the next refusals are not said)\n", err)
				}
				continue
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
	// A connection that asks sonde/breaks/watch is a watcher of the
	// session's breakpoints until it closes.
	var detach func()
	defer func() {
		if detach != nil {
			detach()
		}
	}()
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		if w, ok := inj.(breakWatcher); ok && detach == nil && isWatch(line) {
			detach = w.watch()
		}
		room <- struct{}{}
		wg.Add(1)
		answer := func() {
			defer func() { <-room; wg.Done() }()
			answer, err := inj.Inject(ctx, line)
			if err != nil {
				id, _ := jsonrpc.ScanID(line)
				code := int64(jsonrpc.CodeInternalError)
				if errors.Is(err, coretap.ErrLegacyInject) || errors.Is(err, coretap.ErrSessionGone) {
					code = CodeNoInject // what the session cannot take: a usage error
				}
				answer, _ = jsonrpc.EncodeError(id, &jsonrpc.Error{Code: code, Message: "sonde tap: " + err.Error()})
			}
			wmu.Lock()
			defer wmu.Unlock()
			c.Write(append(answer, '\n'))
		}
		if len(line) > bigInjectLine {
			answer()
			continue
		}
		go answer()
	}
}

// breakWatcher is an injectTarget with breakpoints: a connection that
// asks sonde/breaks/watch counts as a watcher (hold.Engine.Attach) until
// it closes.
type breakWatcher interface {
	watch() (detach func())
}

// isWatch reports whether line is a sonde/breaks/watch request.
func isWatch(line []byte) bool {
	if !bytes.Contains(line, []byte(hold.MethodWatch)) {
		return false
	}
	msg, err := jsonrpc.Decode(line)
	return err == nil && msg.Kind == jsonrpc.KindRequest && msg.Method == hold.MethodWatch
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
session the recording is of (its Mcp-Session-Id, protocol version and credentials; through the
tap's own recording, the session of the host's latest POST), once the host has opened one; its
answer comes back on that POST. A legacy HTTP+SSE session takes none (its server answers on the
host's own event stream). A tap with fault rules (--fault), and one that does not record in the
sessions folder (--record FILE, --no-record), take no injected requests.

Only the user who runs the tap may use its socket: sonde inject refuses a sessions folder
open to other users or owned by another (MCP_NOT_PRIVATE, with the command to run), and the
tap closes a connection from another user's process.

Exit status: 0; 2 for a usage error, no live session that takes requests, or a sessions
folder or tap that is not the user's alone (MCP_NOT_PRIVATE); 3 when the
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
	path, _, err := watchTarget("sonde inject", &WatchOptions{Dir: o.Dir}, o.Session)
	if err != nil {
		return err
	}
	line, err := requestLine(method, params)
	if err != nil {
		return err
	}
	msg, err := askSession(path, line, o.Timeout, "sonde inject", "is it live, a tap recording in the sessions folder, without --fault?")
	if err != nil {
		return err
	}
	if msg.Error != nil && msg.Error.Code == CodeNoInject {
		return cmdutil.Usagef("sonde inject: " + msg.Error.Message)
	}
	if msg.Error != nil {
		return &client.Error{Code: client.CodeRemote, Message: fmt.Sprintf("%s: %d %s", method, msg.Error.Code, msg.Error.Message), RPC: msg.Error}
	}
	fmt.Fprintln(env.Out, cmdutil.IndentJSON(msg.Result))
	return nil
}

// requestLine is one JSON-RPC request for a session's socket (id 1: the
// socket answers each line on its own); params nil sends none.
func requestLine(method string, params any) ([]byte, error) {
	req := map[string]any{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		req["params"] = params
	}
	return json.Marshal(req)
}

// askSession sends one request line through the socket of the live
// session recorded at path and returns the answer. who names the command
// in messages; hint says, when there is no socket, what to check.
func askSession(path string, line []byte, timeout time.Duration, who, hint string) (jsonrpc.Message, error) {
	msg, _, err := askSessionLine(path, line, timeout, who, hint)
	return msg, err
}

// askSessionLine is askSession, with the answer's line as it came (which
// may carry members besides JSON-RPC's: coretap.WireIDMember).
func askSessionLine(path string, line []byte, timeout time.Duration, who, hint string) (jsonrpc.Message, []byte, error) {
	// A socket in a folder others may write could be anyone's: the
	// request (and what it carries) would go to them.
	if err := checkPrivateDir(filepath.Dir(path)); errors.Is(err, ErrNotPrivate) {
		var ce *client.Error
		errors.As(err, &ce)
		return jsonrpc.Message{}, nil, notPrivate(who + ": " + ce.Message)
	}
	conn, err := net.Dial("unix", socketPath(path))
	if err != nil {
		return jsonrpc.Message{}, nil, cmdutil.Usagef(fmt.Sprintf("%s: the session %s takes no requests (%s): %v", who, strings.TrimSuffix(path, sessions.Ext), hint, err))
	}
	defer conn.Close()
	if err := checkPeer(conn, who); err != nil {
		return jsonrpc.Message{}, nil, err
	}
	conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return jsonrpc.Message{}, nil, &client.Error{Code: client.CodeProcessExit, Message: who + ": the tap went away: " + err.Error(), Err: err}
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	answer, err := br.ReadBytes('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return jsonrpc.Message{}, nil, &client.Error{Code: client.CodeTimeout, Message: fmt.Sprintf("%s: no answer within %v", who, timeout), Err: client.ErrTimeout}
		}
		return jsonrpc.Message{}, nil, &client.Error{Code: client.CodeProcessExit, Message: who + ": the tap went away before the answer: " + err.Error(), Err: err}
	}
	msg, err := jsonrpc.Decode(answer)
	if err != nil {
		return jsonrpc.Message{}, nil, &client.Error{Code: client.CodeProtocol, Message: who + ": the answer is not a JSON-RPC response: " + err.Error(), Err: client.ErrProtocol}
	}
	return msg, answer, nil
}
