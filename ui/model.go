// Package ui is sonde's terminal interface: one tea.Model (Model) that owns
// focus, layout and routing, over panes that each live in their own package
// (ui/pending, ui/frames, ui/stderr, ui/tools, ui/lesson) and a leaf theme.
//
// The client's events enter through one re-armed command that blocks on the
// subscription and drains what else is waiting, so a burst of frames costs
// one render. Update does no I/O: starting the server, the handshake, calls,
// cancels and restarts run in commands whose results come back as messages.
package ui

import (
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/stderr"
	"github.com/sonde-mcp/sonde/ui/theme"
	"github.com/sonde-mcp/sonde/ui/timeline"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// Conn is the UI's connection to one server: its process's client and
// the subscription to its events.
type Conn struct {
	Client *client.Client
	Sub    *client.Subscription
	// Pid is the server's process when known before its events (a server
	// already running when the subscription was made); 0 otherwise.
	Pid int
}

// Options configure the TUI.
type Options struct {
	// Start launches the server and subscribes to its client (no
	// handshake). It is called from a command, never from Update, at start
	// (unless First is set) and on every restart.
	Start func() (Conn, error)
	// First, if set, is the session already started by the caller (so that
	// a server that cannot be started is reported before the UI opens).
	First *Conn
	// Transport and Command describe the server in the status bar.
	Transport string
	Command   string
	// CallTarget are the arguments of `sonde call` that reach the server
	// ("--" and its command line, --url URL with --transport, or --server
	// NAME): the Tools pane's Y copies a call as a sonde call command line
	// with them. Nil: Y says there is none.
	CallTarget []string
	// Palette is the initial palette; NoColor keeps it (NO_COLOR), otherwise
	// it follows the terminal's background once known.
	Palette theme.Palette
	NoColor bool
	// FrameCapacity bounds the frames kept (0: the pane's default).
	FrameCapacity int
	// Lesson, if set, builds the narration pane of `sonde demo` with the
	// root's styles.
	Lesson func(st *theme.Styles) Lesson
	// Now is the clock (tests pass a fixed one).
	Now func() time.Time
	// Reconnect restarts the session by itself when the HTTP server ends it
	// (MCP_SESSION_EXPIRED); otherwise the status bar says to press ctrl+r.
	Reconnect bool
	// Recorder, if set, records the session to capture files (R starts and
	// stops); nil disables the key.
	Recorder Recorder
	// Replay, if set, shows this capture instead of a live session
	// (`sonde replay`): no server is started, and the timeline keys move
	// the panes through the capture (Start is not used).
	Replay *replay.Timeline
	// SaveDir is where the Features pane saves resource contents (default:
	// the working directory).
	SaveDir string
	// Watch, if set, shows a session sonde watches but does not drive
	// (sonde watch: a host's session through sonde tap), live: no server
	// is started (Start is not used), the panes follow the recording as
	// it grows, and the Tools and Features panes' calls, lists, reads and
	// prompts are injected into the session through the tap
	// (ui/watch.go).
	Watch Watched
	// Servers, if set, makes this the fleet inspector over several
	// servers (sonde --all): Tools lists every running server's tools as
	// server/tool and a row for each server not started (enter starts
	// it); Pending, Frames and stderr show every server's rows, tagged,
	// and S shows one server's or all. Start, First, Recorder and the
	// Features pane are not used.
	Servers Servers
	// Breaks, if set, are the session's breakpoints and held frames
	// (docs/breakpoints.md): H shows what is held, B the breakpoints, and
	// b in Frames or Pending sets one from the row. A live session's
	// comes from sonde's own Engine (LocalBreaks).
	Breaks Breaks
	// Export writes the HTML report of a capture beside it (X); nil
	// disables the key. Capture is the file a replay or a watched session
	// reads (a live session exports its recording: R, or --record).
	Export  Exporter
	Capture string
	// Policies, if set, are client timeout policies (sonde --policies,
	// docs/timeouts.md): Pending shows which of them each of sonde's
	// requests has outlived, and the timeline marks their deadlines.
	Policies []timeouts.Policy
}

// pane is what the root needs of every pane (see the pane packages).
type pane interface {
	SetSize(w, h int)
	Apply(evs []client.Event)
	SetNow(t time.Time)
	Update(msg tea.Msg) tea.Cmd
	View() string
	Title() string
	Keys() help.KeyMap
	Capturing() bool
	Reset()
}

// Lesson is a scripted walk-through shown in its own pane (sonde demo).
type Lesson interface {
	pane
	// Attach gives the lesson the current client, after each handshake.
	Attach(c *client.Client)
	// Next advances one step and returns the step's command (its I/O).
	Next() tea.Cmd
	// ToggleFIFO switches the "what a FIFO client would have done" view.
	ToggleFIFO()
	// Finished reports whether the lesson is at its last step.
	Finished() bool
}

// Model is the root tea.Model.
type Model struct {
	opts   Options
	styles *theme.Styles
	keys   keyMap
	help   help.Model

	pending  *pending.Model
	frames   *frames.Model
	stderr   *stderr.Model
	tools    *tools.Model
	features *features.Model
	timeline *timeline.Model
	lesson   Lesson
	panes    [paneCount]pane

	width, height int
	focus         int
	zoom          bool
	autoZoom      bool // the zoom is formRoom's, for a form open in a short Tools pane
	showHelp      bool
	instr         instrState // the server's instructions (instructions.go)
	rects         map[int]rect

	gen     int // session generation, bumped by each restart
	sess    Conn
	conn    connState
	stats   stats
	now     time.Time
	quitted bool
	// confirmQuit: q was pressed with requests in flight; the help line
	// asks, and the next key answers.
	confirmQuit bool
	rec         RecordState
	exp         exportState

	// The server's requests waiting for the user, and the dialog open over
	// the panes (dialog.go).
	asks    asks
	urlReqs []urlReq // calls refused with -32042, their dialogs oldest first (urlrequired.go)
	dlg     dialog
	held    *client.Client // the client told to hold its deadlines (dialog.go syncHold), or nil
	// auth is the OAuth flow's authorization dialog while the flow waits
	// (authorize.go); authHidden: put off with esc, not reopened.
	auth       *answer.Authorize
	authHidden bool
	answerErr  error // the last answer or roots change that failed
	// mode is the way the session is had (mode.go): one of lv, rp, wt, fl,
	// the one set, which the status bar and the mode's own keys read.
	mode mode
	lv   *live        // set in a live session
	rp   *replayState // set in a replay
	wt   *watchState  // set when watching a tapped session
	fl   *fleet       // set in the fleet inspector (fleet.go)
	// brk is the session's breakpoints and held frames (breaks.go), when
	// the mode can hold frames (actBreaks); nil otherwise.
	brk *breaksState

	// The screen is drawn again only after a change (redraw.go): frame is
	// the screen last drawn, stale says it must be drawn again, renders
	// counts the draws.
	drawn   string
	stale   bool
	renders int
}

// connState is what the status bar shows about the server.
type connState struct {
	starting   bool
	pid        int
	exited     string
	server     mcp.Implementation
	protocol   string // the version and the era ("2025-11-25 legacy")
	err        error
	restarting bool
	expired    bool // a request failed with MCP_SESSION_EXPIRED
}

// New returns the root model.
func New(opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	st := theme.New(opts.Palette)
	m := &Model{
		opts: opts, styles: st, keys: defaultKeyMap(), help: help.New(),
		pending: pending.New(st), frames: frames.New(st, frames.Options{Capacity: opts.FrameCapacity}),
		stderr: stderr.New(st), tools: tools.New(st, tools.Options{CallTarget: opts.CallTarget}), features: features.New(st), timeline: timeline.New(st),
		now: opts.Now(), conn: connState{starting: true},
	}
	m.pending.SetPolicies(opts.Policies)
	m.timeline.SetPolicies(opts.Policies)
	m.panes = [paneCount]pane{m.pending, m.frames, m.tools, m.stderr, nil, m.features, m.timeline}
	m.keys.LessonNext.SetEnabled(opts.Lesson != nil)
	m.keys.FIFO.SetEnabled(opts.Lesson != nil)
	if opts.Recorder != nil {
		m.rec.On, m.rec.Path, m.rec.Note = opts.Recorder.State()
		m.rec.Size = -1
	}
	if opts.Lesson != nil {
		m.lesson = opts.Lesson(st)
		m.panes[paneLesson] = m.lesson
		m.focus = paneLesson
	}
	m.mode = newMode(m)
	if ok, _ := m.mode.Can(actBreaks); ok && opts.Breaks != nil {
		m.brk = &breaksState{src: opts.Breaks, seen: map[string]hold.Held{}, mine: map[string]bool{}, now: func() time.Time { return m.now }}
	}
	m.frames.SetBreaks(m.brk != nil)
	m.pending.SetBreaks(m.brk != nil)
	syncKeys(&m.keys, m.mode)
	switch {
	case m.fl != nil:
		m.panes[paneFeatures] = nil // prompts and resources are one server's
		m.fl.syncServerKey()
	case m.rp != nil:
		m.rp.freshPanes()
	}
	m.applyHelpStyles()
	return m
}

// Conn returns the current connection (to close it after the program ends).
func (m *Model) Conn() Conn { return m.sess }

// Init starts the server, the clock, and asks for the background colour.
func (m *Model) Init() tea.Cmd {
	if m.rp != nil {
		// A replay opens at the end of the capture, paused.
		return tea.Batch(m.rp.seek(m.rp.tl.Len()), tea.RequestBackgroundColor)
	}
	if m.wt != nil {
		var breaks tea.Cmd
		if m.brk != nil {
			breaks = m.brk.init()
		}
		return tea.Batch(waitWatch(m.wt.src), tick(), tea.RequestBackgroundColor, breaks)
	}
	if m.fl != nil {
		return tea.Batch(m.fl.open(), tick(), tea.RequestBackgroundColor)
	}
	start := m.startCmd(m.gen)
	if first := m.opts.First; first != nil {
		gen := m.gen
		start = func() tea.Msg { return startedMsg{gen: gen, sess: *first} }
	}
	var breaks tea.Cmd
	if m.brk != nil {
		breaks = m.brk.init()
	}
	return tea.Batch(start, tick(), tea.RequestBackgroundColor, breaks)
}

func (m *Model) applyHelpStyles() {
	st := m.styles
	m.help.Styles = help.Styles{
		ShortKey: st.Key, ShortDesc: st.KeyHelp, ShortSeparator: st.Subtle, Ellipsis: st.Subtle,
		FullKey: st.Key, FullDesc: st.KeyHelp, FullSeparator: st.Subtle,
	}
}

// visible reports whether pane i exists in this model.
func (m *Model) visible(i int) bool { return i >= 0 && i < paneCount && m.panes[i] != nil }
