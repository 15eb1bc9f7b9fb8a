package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/transport"
)

// stdioKillAfter is each grace period of the shutdown step (after closing
// stdin, after SIGTERM).
const stdioKillAfter = 2 * time.Second

// killAfter is each grace period of the shutdown: stdioKillAfter, or
// --timeout when it is shorter.
func (c *checker) killAfter() time.Duration { return min(stdioKillAfter, c.timeout) }

// stdio is the checklist of a command: it resolves, its runtime answers,
// it spawns, its stdout and stderr before the handshake, initialize, the
// handshake steps, and a clean shutdown.
func (c *checker) stdio(ctx context.Context, l *list, t *connect.Target) {
	env, ok := c.checkCommand(ctx, l, t)
	if !ok {
		return
	}

	start := l.begin("spawn")
	cl := c.newClient()
	evs := follow(cl)
	cfg := transport.StdioConfig{Argv: t.Argv, Dir: t.Cwd, Env: env, KillAfter: c.killAfter(), Hide: t.Hide}
	if err := cl.Connect(client.Stdio(cfg)); err != nil {
		cl.Close()
		l.fail("spawn", start, cmdutil.ErrText(err), "check that the file is a program for this system and that you may run it (chmod +x; a script needs its #! line)")
		return
	}
	started := evs.until(func(ev client.Event) bool { return ev.Kind == client.EvProcess && ev.Proc.What == client.ProcStart }, time.Second)
	l.pass("spawn", start, fmt.Sprintf("pid %d", pidOf(started)))

	// initialize runs while the output before it is judged: its outcome
	// comes after the stdout and stderr steps.
	start = l.begin("initialize")
	ctx1, cancel := context.WithTimeout(ctx, c.timeout+time.Second)
	res, initErr := cl.Initialize(ctx1)
	cancel()
	initTook := time.Since(start)
	// The initialize response (or the exit, and the last of stderr) is
	// among the events shortly after Initialize returns.
	pre := evs.until(func(ev client.Event) bool {
		if initErr == nil {
			return ev.Kind == client.EvFrame && ev.Frame.Dir == client.In && ev.Frame.Verdict == client.VerdictResolved
		}
		return ev.Kind == client.EvProcess && ev.Proc.What == client.ProcExit
	}, time.Second)
	if initErr != nil && client.CodeOf(initErr) == client.CodeTimeout {
		pre = evs.snapshot()
	}

	st := time.Now()
	if line, n := strayLine(pre); n > 0 {
		l.fail("stdout", st, fmt.Sprintf("%d line(s) on stdout before the handshake are not JSON-RPC; the first: %q", n, cut(line, 200)),
			"the server must write only JSON-RPC messages on stdout: send its logs and banners to stderr (console.error, print(..., file=sys.stderr), logging to stderr)")
		c.shutdown(nil, cl, evs)
		return
	}
	l.pass("stdout", st, "only JSON-RPC")

	st = time.Now()
	if text := stderrOf(pre); text != "" {
		l.pass("stderr", st, cut(text, 400))
	} else {
		l.pass("stderr", st, "nothing")
	}

	if initErr != nil {
		detail, hint := initFailure(initErr, pre, c.timeout)
		l.steps = append(l.steps, Step{Name: "initialize", MS: ms(initTook), Detail: detail, Hint: hint})
		c.shutdown(nil, cl, evs)
		return
	}
	l.steps = append(l.steps, Step{Name: "initialize", OK: true, MS: ms(initTook), Detail: "answered"})
	if !c.handshake(ctx, l, cl, res, evs) {
		c.shutdown(nil, cl, evs)
		return
	}
	c.shutdown(l, cl, evs)
}

// checkCommand is the command step (the entry's env, the program found)
// and, for a known runtime, the runtime step; env is the server's
// environment.
func (c *checker) checkCommand(ctx context.Context, l *list, t *connect.Target) (env []string, ok bool) {
	env, err := transport.BuildEnv(os.Environ(), nil, t.Env)
	start := l.begin("command")
	if err != nil {
		l.fail("command", start, err.Error(), "fix the entry's env")
		return nil, false
	}
	name := t.Argv[0]
	path, err := lookPath(name, t.Cwd, env)
	if err != nil {
		l.fail("command", start, err.Error(), commandHint(name))
		return nil, false
	}
	l.pass("command", start, path)

	if rt := runtimeOf(name); rt != nil {
		start = l.begin("runtime")
		bin := rt[0]
		if rt[0] == "" { // the command is the runtime itself
			bin = path
		}
		v, err := version(ctx, bin, rt[1:], t.Cwd, env, c.timeout)
		if err != nil {
			l.fail("runtime", start, err.Error(), commandHint(name))
			return nil, false
		}
		l.pass("runtime", start, v)
	}
	return env, true
}

// initFailure says why initialize failed, with the server's stderr.
func initFailure(err error, evs []client.Event, timeout time.Duration) (detail, hint string) {
	stderr := stderrOf(evs)
	tail := ""
	if stderr != "" {
		tail = "; its stderr: " + cut(stderr, 300)
	}
	switch client.CodeOf(err) {
	case client.CodeTimeout:
		return fmt.Sprintf("no answer to initialize within %v%s", timeout, tail),
			"the server started but did not answer: it may wait for something (a login, a network resource, a first download by npx/uvx), or read another transport; run it in a terminal, or give it more time with --timeout"
	case client.CodeProcessExit:
		status := "it exited"
		if x := exitOf(evs); x != nil {
			status = "it exited with " + x.Status()
		}
		return status + " before answering initialize" + tail,
			"run the command in a terminal to see why it stops (a missing argument, a missing variable, a missing dependency); its stderr above is usually the reason"
	}
	return cmdutil.ErrText(err) + tail, hintFor(err)
}

// shutdown closes the client; with l, the shutdown step: the server must
// exit when its stdin closes, without a signal.
func (c *checker) shutdown(l *list, cl *client.Client, evs *events) {
	var start time.Time
	if l != nil {
		start = l.begin("shutdown")
	}
	cl.Close()
	all := evs.all()
	if l == nil {
		return
	}
	var signals []string
	for _, ev := range all {
		if ev.Kind == client.EvProcess && ev.Proc.What == client.ProcSignal {
			signals = append(signals, ev.Proc.Signal)
		}
	}
	x := exitOf(all)
	switch {
	case len(signals) > 0:
		l.fail("shutdown", start, fmt.Sprintf("the server did not exit within %v of its stdin closing: sonde sent %s", c.killAfter(), strings.Join(signals, ", ")),
			"a stdio server must exit when its stdin closes (the host's way of stopping it); a process it leaves behind keeps running after the host quits")
	case x == nil:
		l.fail("shutdown", start, "the server's exit was not seen", "")
	case len(x.Left) > 0:
		l.fail("shutdown", start, fmt.Sprintf("the server exited (%s) but left %s running; sonde stopped them", x.Status(), leftText(x.Left)),
			"a stdio server must end what it started when it exits: a host that closes it leaves these running")
	case x.Code != 0:
		l.pass("shutdown", start, "exited on stdin close with "+x.Status())
	default:
		l.pass("shutdown", start, "exited on stdin close with exit code 0")
	}
}

// strayLine is the first line on stdout that is not JSON-RPC, and how many
// there are.
func strayLine(evs []client.Event) (string, int) {
	first, n := "", 0
	for _, ev := range evs {
		if ev.Kind != client.EvFrame || ev.Frame.Dir != client.In {
			continue
		}
		switch ev.Frame.Verdict {
		case client.VerdictMalformed, client.VerdictInvalid, client.VerdictTooLong:
			if n == 0 {
				first = string(ev.Frame.Raw)
			}
			n++
		}
	}
	return first, n
}

// stderrOf is what the server wrote on stderr.
func stderrOf(evs []client.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == client.EvStderr {
			b.Write(ev.Stderr)
		}
	}
	return b.String()
}

func exitOf(evs []client.Event) *client.Exit {
	for _, ev := range evs {
		if ev.Kind == client.EvProcess && ev.Proc.What == client.ProcExit && ev.Proc.Exit != nil {
			return ev.Proc.Exit
		}
	}
	return nil
}

func pidOf(evs []client.Event) int {
	for _, ev := range evs {
		if ev.Kind == client.EvProcess && ev.Proc.What == client.ProcStart {
			return ev.Proc.Pid
		}
	}
	return 0
}

// getenv reads name from env (KEY=VALUE entries; on Windows without
// regard to case).
func getenv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		k, v, _ := strings.Cut(env[i], "=")
		if k == name || (runtime.GOOS == "windows" && strings.EqualFold(k, name)) {
			return v
		}
	}
	return ""
}

// lookPath finds name as the server's process would: a path as it is
// (relative to dir), a bare name on the PATH of env.
func lookPath(name, dir string, env []string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if found, ok := executable(p, env); ok {
			return found, nil
		}
		if _, err := os.Stat(p); err == nil {
			return "", fmt.Errorf("%s is not an executable file", textfmt.Escape(p))
		}
		return "", fmt.Errorf("%s does not exist", textfmt.Escape(p))
	}
	pathVar := getenv(env, "PATH")
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			continue
		}
		if found, ok := executable(filepath.Join(d, name), env); ok {
			return found, nil
		}
	}
	return "", fmt.Errorf("%s is not found on the server's PATH (%s)", textfmt.Escape(name), textfmt.Escape(pathVar))
}

// executable is p, or on Windows p with one of PATHEXT's extensions, when
// it is an executable file.
func executable(p string, env []string) (string, bool) {
	if runtime.GOOS == "windows" {
		cands := []string{p}
		if filepath.Ext(p) == "" {
			exts := getenv(env, "PATHEXT")
			if exts == "" {
				exts = ".COM;.EXE;.BAT;.CMD"
			}
			cands = nil
			for _, e := range strings.Split(exts, ";") {
				cands = append(cands, p+strings.ToLower(e))
			}
		}
		for _, c := range cands {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
				return c, true
			}
		}
		return "", false
	}
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", false
	}
	return p, true
}

// runtimeOf is the version command of the runtime a launcher needs (the
// first element "" when the command is the runtime), nil for others.
func runtimeOf(name string) []string {
	base := strings.ToLower(filepath.Base(name))
	base = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".cmd"), ".bat")
	switch {
	case base == "npx" || base == "npm":
		return []string{"node", "--version"}
	case base == "node":
		return []string{"", "--version"}
	case base == "uvx":
		return []string{"uv", "--version"}
	case base == "uv":
		return []string{"", "--version"}
	case base == "python" || strings.HasPrefix(base, "python3"):
		return []string{"", "--version"}
	}
	return nil
}

// version runs bin args (a bare bin looked up on env's PATH) and returns
// the first line of its output.
func version(ctx context.Context, bin string, args []string, dir string, env []string, timeout time.Duration) (string, error) {
	path := bin
	if !filepath.IsAbs(bin) {
		p, err := lookPath(bin, dir, env)
		if err != nil {
			return "", fmt.Errorf("the runtime is missing: %w", err)
		}
		path = p
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s %s did not answer within %v", textfmt.Escape(path), strings.Join(args, " "), timeout)
	case err != nil:
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return "", fmt.Errorf("%s %s failed (%v): %s", textfmt.Escape(path), strings.Join(args, " "), err, cut(line, 200))
		}
		return "", fmt.Errorf("%s %s: %v", textfmt.Escape(path), strings.Join(args, " "), err)
	}
	return textfmt.Clean(bin + " " + strings.TrimSpace(line)), nil
}

// commandHint is what to do when the command or its runtime is missing.
func commandHint(name string) string {
	switch rt := runtimeOf(name); {
	case rt != nil && (rt[0] == "node" || strings.Contains(strings.ToLower(name), "node")):
		return "install Node.js (it brings node, npm and npx), or give the full path of npx in the entry: a desktop host does not see the PATH of your shell (nvm, volta, fnm)"
	case rt != nil && (rt[0] == "uv" || strings.Contains(strings.ToLower(name), "uv")):
		return "install uv (it brings uvx), or give the full path of uvx in the entry: a desktop host does not see the PATH of your shell"
	case rt != nil:
		return "install Python, or give the full path of the interpreter in the entry (a virtualenv's bin/python)"
	}
	return "give the full path of the command in the entry, or install it: a desktop host does not see the PATH of your shell"
}

// leftText names the processes a server left behind: "2 processes: pid
// 4711 (node), pid 4712 (sh)".
func leftText(left []client.ProcStat) string {
	names := make([]string, 0, len(left))
	for _, p := range left[:min(len(left), 5)] {
		n := fmt.Sprintf("pid %d", p.Pid)
		if p.Name != "" {
			n += " (" + textfmt.Clean(p.Name) + ")"
		}
		names = append(names, n)
	}
	if len(left) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(left)-5))
	}
	what := "1 process"
	if len(left) > 1 {
		what = fmt.Sprintf("%d processes", len(left))
	}
	return what + ": " + strings.Join(names, ", ")
}
