package tap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/report"
	"github.com/sonde-mcp/sonde/sessions"
	coretap "github.com/sonde-mcp/sonde/tap"
	"github.com/sonde-mcp/sonde/ui"
	"github.com/sonde-mcp/sonde/ui/picker"
	uisessions "github.com/sonde-mcp/sonde/ui/sessions"
	"github.com/sonde-mcp/sonde/ui/theme"
)

// ReplayUI runs the UI over a capture (sonde replay FILE's): the root
// command hands it to sonde watch, which opens an ended session with it.
type ReplayUI func(ctx context.Context, env *cmdutil.Env, path string, frames int) error

// watchFrames is the Frames pane's capacity in the watch UI.
const watchFrames = 20000

// runWatchUI is sonde watch on a terminal: the session list, where enter
// opens a session (live in the usual panes, or an ended one as a replay)
// and quitting it comes back to the list; with arg, that session at once
// (quitting it ends sonde watch).
func runWatchUI(ctx context.Context, env *cmdutil.Env, o *WatchOptions, arg string) error {
	dir, err := sessionsDir(o.Dir)
	if err != nil {
		return err
	}
	if arg != "" {
		path, pid, err := watchTarget("sonde watch", o, arg)
		if err != nil {
			return err
		}
		return openSession(ctx, env, o, o.Replay, path, pid)
	}
	src := &listSource{dir: dir, cache: sessions.TappedCache{}}
	note, last := "", ""
	for {
		list := uisessions.New(uisessions.Options{Source: src, Styles: theme.New(palette()), Note: note, Select: last, Where: dir})
		p := tea.NewProgram(list, tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
		if _, err := p.Run(); err != nil {
			return interrupted(err)
		}
		id, ok := list.Chosen()
		if !ok {
			return nil
		}
		note, last = "", id
		path := filepath.Join(dir, id+sessions.Ext)
		sid, _ := sessions.Parse(id)
		pid := sid.PID
		if err := openSession(ctx, env, o, o.Replay, path, pid); err != nil {
			var st *cmdutil.ExitStatus
			if errors.As(err, &st) {
				return err
			}
			note = id + ": " + err.Error()
		}
	}
}

// OpenSession runs the main UI on the session recorded at path by the tap
// of pid (0: not known): live while that tap runs (the recording followed
// as it grows, requests injected through its socket), else as a replay
// (replayUI).
func OpenSession(ctx context.Context, env *cmdutil.Env, replayUI ReplayUI, path string, pid int) error {
	return openSession(ctx, env, nil, replayUI, path, pid)
}

// openSession is OpenSession; o's --otlp-* (when o is set) exports a live
// session's spans while it is open.
func openSession(ctx context.Context, env *cmdutil.Env, o *WatchOptions, replayUI ReplayUI, path string, pid int) error {
	s := sessions.ReadTapped(path, tapRuns(path))
	if s.Problem != "" && s.Problem != "empty: nothing recorded yet" {
		return errors.New(s.Problem)
	}
	if !s.Live {
		if replayUI == nil {
			return errors.New("the session ended, and this sonde cannot replay it here: sonde replay " + s.ID)
		}
		return replayUI(ctx, env, path, watchFrames)
	}
	var tee func(client.Event)
	if o != nil {
		t, stop, err := watchExport(env, o)
		if err != nil {
			return err
		}
		defer stop()
		tee = t
	}
	src, err := followSession(path, pid, tee)
	if err != nil {
		return err
	}
	defer src.Close()
	p := palette()
	what := watchWhat(capture.Header{Command: s.Command, URL: s.URL})
	opts := ui.Options{
		Watch: src, Transport: "tap · " + s.Label, Command: what,
		Palette: p, NoColor: os.Getenv("NO_COLOR") != "", FrameCapacity: watchFrames,
		Export: report.Beside(cmdutil.Version), Capture: path,
	}
	// The UI watches the tap's breakpoints while it runs (H, B): closing
	// it releases what the tap holds, when it was the last watcher.
	if wb := watchBreaksOf(path); wb != nil {
		defer wb.Close()
		opts.Breaks = wb
	}
	prog := tea.NewProgram(ui.New(opts), tea.WithContext(ctx), tea.WithInput(env.In), tea.WithOutput(env.Screen))
	_, err = prog.Run()
	return interrupted(err)
}

// palette is the UI's palette: none under NO_COLOR, else dark until the
// terminal says its background.
func palette() theme.Palette {
	if os.Getenv("NO_COLOR") != "" {
		return theme.NoColor()
	}
	return theme.Dark()
}

// interrupted is the exit of a program that ended with an interrupt.
func interrupted(err error) error {
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitInterrupted, Msg: "interrupted"}
	}
	return err
}

// listSource is the session list's view of the sessions folder.
type listSource struct {
	dir   string
	mu    sync.Mutex
	cache sessions.TappedCache
}

func (l *listSource) Rows() ([]uisessions.Row, error) {
	l.mu.Lock()
	list, err := sessions.ListTappedCached(l.dir, l.cache)
	l.mu.Unlock()
	rows := make([]uisessions.Row, len(list))
	for i, s := range list {
		rows[i] = sessionRow(s)
	}
	return rows, err
}

// sessionRow is a session as the list shows it.
func sessionRow(s Tapped) uisessions.Row {
	r := uisessions.Row{
		ID: s.ID, Label: s.Label, Server: watchWhat(capture.Header{Command: s.Command, URL: s.URL}),
		Client: s.Host(), Host: hostLabel(s), Started: s.Started, Live: s.Live, Cut: !s.Live && !s.CleanEnd && s.Problem == "",
		Calls: s.Calls, Errors: s.Errors, Late: s.Late, Unknown: s.Unknown, Duplicate: s.Duplicate, Problem: s.Problem,
	}
	if s.Ended != nil {
		r.Ended = *s.Ended
	}
	return r
}

// hostLabel names the process that launched the tap: its name while it
// runs (where the system says it), and its pid.
func hostLabel(s Tapped) string {
	if s.HostPID <= 0 {
		return ""
	}
	pid := "pid " + strconv.Itoa(s.HostPID)
	if s.HostName != "" {
		return s.HostName + " (" + pid + ")"
	}
	return pid
}

// followSource is a live session for the UI (ui.Watched): the recording
// read as it grows, in a goroutine, its records turned back into events;
// requests injected through the session's socket.
type followSource struct {
	path   string
	cancel context.CancelFunc
	evs    chan client.Event
	done   chan struct{}
	missed atomic.Uint64
	ended  atomic.Bool
	noSock string // why the session takes no requests ("" when it does)
	// tee, when set, gets each event read (the --otlp-* export), in the
	// reading goroutine.
	tee func(client.Event)
}

// followBuffer bounds the events read ahead of the UI: past it the reader
// waits (the file keeps them; the tap is never slowed).
const followBuffer = 1 << 14

// followSession starts following the recording at path.
func followSession(path string, pid int, tee func(client.Event)) (*followSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &followSource{path: path, cancel: cancel, evs: make(chan client.Event, followBuffer), done: make(chan struct{}), tee: tee}
	if _, err := os.Stat(socketPath(path)); err != nil {
		s.noSock = "this tap takes no injected requests (it does not record in the sessions folder)"
	} else if rules, err := s.Faults(ctx); err == nil && len(rules) > 0 {
		s.noSock = "this tap has fault rules (--fault): it takes no injected requests (F lists the rules)"
	}
	go s.read(ctx, f, pid)
	return s, nil
}

// read turns the records into events until the recording ends (its end
// record, or its tap gone) or Close.
func (s *followSource) read(ctx context.Context, f *os.File, pid int) {
	defer close(s.done)
	defer close(s.evs)
	defer s.ended.Store(true)
	defer f.Close()
	rd, err := capture.NewReader(sessions.NewFollower(ctx, f, pid, watchPoll))
	if err != nil {
		return
	}
	h := rd.Header()
	for rec, err := range rd.All() {
		if err != nil {
			var fe *capture.FormatError
			if errors.As(err, &fe) {
				continue
			}
			return
		}
		switch rec.Type {
		case capture.TypeEnd:
			return
		case capture.TypeMissed:
			s.missed.Add(rec.Count)
			continue
		}
		ev, ok, err := h.Event(rec)
		if err != nil || !ok {
			continue
		}
		if s.tee != nil {
			s.tee(ev)
		}
		select {
		case s.evs <- ev:
		case <-ctx.Done():
			return
		}
	}
}

// Next blocks for the next events (ui.Watched).
func (s *followSource) Next(limit int) ([]client.Event, uint64, bool) {
	ev, ok := <-s.evs
	if !ok {
		return nil, s.missed.Load(), false
	}
	evs := []client.Event{ev}
	for len(evs) < limit {
		select {
		case ev, ok := <-s.evs:
			if !ok {
				return evs, s.missed.Load(), true
			}
			evs = append(evs, ev)
		default:
			return evs, s.missed.Load(), true
		}
	}
	return evs, s.missed.Load(), true
}

// Inject sends a request through the session's socket (ui.Watched); the
// id it returns is the one the tap gave the request on the wire.
func (s *followSource) Inject(ctx context.Context, method string, params any) (jsonrpc.ID, json.RawMessage, error) {
	if why := s.NoInject(); why != "" {
		return jsonrpc.ID{}, nil, errors.New(why)
	}
	line, err := requestLine(method, params)
	if err != nil {
		return jsonrpc.ID{}, nil, err
	}
	timeout := deadlineOr(ctx, ui.InjectTimeout)
	msg, answer, err := askSessionLine(s.path, line, timeout, "sonde watch", "its tap ended, or takes no requests")
	if err != nil {
		var ue *cmdutil.UsageError
		if errors.As(err, &ue) {
			return jsonrpc.ID{}, nil, errors.New(ue.Msg)
		}
		return jsonrpc.ID{}, nil, err
	}
	id := wireID(answer)
	if msg.Error != nil {
		return id, nil, &client.Error{Code: client.CodeRemote, Message: fmt.Sprintf("%s: %d %s", method, msg.Error.Code, msg.Error.Message), RPC: msg.Error}
	}
	return id, msg.Result, nil
}

// wireID is the id the tap's answer says its request had on the wire
// (coretap.WireIDMember); invalid when it does not say.
func wireID(answer []byte) jsonrpc.ID {
	var m map[string]json.RawMessage
	var id jsonrpc.ID
	if json.Unmarshal(answer, &m) == nil && m[coretap.WireIDMember] != nil {
		json.Unmarshal(m[coretap.WireIDMember], &id)
	}
	return id
}

// Faults lists the tap's fault rules (ui.WatchedFaults): none when it has
// none.
func (s *followSource) Faults(ctx context.Context) ([]ui.FaultRule, error) {
	return s.faults(ctx, 0, false)
}

// SetFault turns rule n on or off (ui.WatchedFaults).
func (s *followSource) SetFault(ctx context.Context, n int, on bool) ([]ui.FaultRule, error) {
	return s.faults(ctx, n, on)
}

// faults asks the tap about its rules (askFaults) and lists them for the
// UI.
func (s *followSource) faults(ctx context.Context, n int, on bool) ([]ui.FaultRule, error) {
	if s.ended.Load() {
		return nil, errors.New("the session ended: its tap is gone")
	}
	st, err := askFaults(s.path, n, on, deadlineOr(ctx, time.Second), "sonde watch", "its tap ended, or does not record in the sessions folder")
	var refused *jsonrpc.Error
	switch {
	case errors.As(err, &refused) && refused.Code == jsonrpc.CodeMethodNotFound:
		return nil, nil // a tap without fault rules
	case errors.As(err, &refused):
		return nil, errors.New(refused.Message)
	case err != nil:
		return nil, err
	}
	rules := make([]ui.FaultRule, 0, len(st.Rules))
	for _, r := range st.Rules {
		rules = append(rules, ui.FaultRule{N: r.Rule, Text: r.Text, On: r.Enabled, Matched: r.Matched, Fired: r.Fired})
	}
	return rules, nil
}

// deadlineOr is the time left before ctx's deadline, or def without one.
func deadlineOr(ctx context.Context, def time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return def
}

// NoInject says why the session takes no requests (ui.Watched).
func (s *followSource) NoInject() string {
	if s.ended.Load() {
		return "the session ended: its tap is gone"
	}
	return s.noSock
}

// Close stops following and waits for the reader.
func (s *followSource) Close() {
	s.cancel()
	go func() {
		for range s.evs { // a reader blocked on a full buffer gets out
		}
	}()
	<-s.done
}

// isTerminal reports whether r (a stream of the run) is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// PickerSessions are the live sessions of the sessions folder as rows of
// the server picker (sonde with no server), which lists them above the
// configured servers.
func PickerSessions() []picker.Item {
	dir, err := sessions.Dir()
	if err != nil {
		return nil
	}
	list, _ := ListSessions(dir)
	var out []picker.Item
	for _, s := range list {
		if !s.Live {
			continue
		}
		source := "live session " + s.ID
		if host := hostLabel(s); host != "" {
			source += " · host " + host
		}
		out = append(out, picker.Item{Name: s.Label, Where: "tapped · live", What: watchWhat(capture.Header{Command: s.Command, URL: s.URL}),
			Source: source + " · enter watches it (sonde watch)", Session: s.ID})
	}
	return out
}

// WatchSession opens the session id of the sessions folder in sonde
// watch's inspector (live, or a replay once it ended): the picker's
// choice of a live session.
func WatchSession(ctx context.Context, env *cmdutil.Env, replayUI ReplayUI, id string) error {
	dir, err := sessionsDir("")
	if err != nil {
		return err
	}
	sid, _ := sessions.Parse(id)
	pid := sid.PID
	return OpenSession(ctx, env, replayUI, filepath.Join(dir, id+sessions.Ext), pid)
}
