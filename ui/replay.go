package ui

import (
	"fmt"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/replay"
	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/stderr"
	"github.com/sonde-mcp/sonde/ui/timeline"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// speedOf returns playback speed i (0 to speedCount-1); 0 is instant (a
// batch of events per tick).
func speedOf(i int) float64 { return [speedCount]float64{0.25, 0.5, 1, 2, 5, 10, 20, 0}[i] }

// speedCount is the number of playback speeds.
const speedCount = 8

const (
	// defaultSpeed is 1x.
	defaultSpeed = 2
	// replayTickEvery is the playback clock's period.
	replayTickEvery = 50 * time.Millisecond
	// instantBatch is how many events instant playback applies per tick.
	instantBatch = 4096
)

type promptKind uint8

const (
	promptNone promptKind = iota
	promptTime
	promptID
)

// replayState is the timeline of `sonde replay`: where the cursor is, where
// it is going, and playback. Events are read by commands (nextLoad), one
// load at a time; Update applies what they return.
type replayState struct {
	tl   *replay.Timeline
	keys replayKeys
	pos  int // events applied to the panes: [0, pos)
	want int // where the cursor is going
	// loading is set while a load command runs.
	loading bool
	// now is the cursor's time since the capture's start: the time of the
	// last event applied, or the playback clock.
	now time.Duration
	// hold, when not negative, is the time the cursor was sent to (a jump
	// to a time): the clock stays there rather than at the last event.
	hold     time.Duration
	playing  bool
	speed    int
	tickGen  int
	lastTick time.Time
	// tools is how many tools/list responses the tool list shown is built
	// from; sessionAt the session record shown (-1: none).
	tools     int
	sessionAt int
	session   capture.Record
	asking    promptKind
	prompt    textinput.Model
	// note is a one-line message for the status bar (a jump that found
	// nothing, a read error).
	note     string
	warnings []string
}

// Messages of the replay.
type (
	replayLoadedMsg struct {
		base     int // the position the events continue; -1: a rebuild from fresh panes
		to       int
		evs      []client.Event
		toolsSet bool
		toolsN   int
		tools    []mcp.Tool
		toolsErr error
		session  *capture.Record
		sessAt   int
		err      error
	}
	replayTickMsg struct {
		gen int
		t   time.Time
	}
)

func newReplayState(m *Model, tl *replay.Timeline) *replayState {
	in := textinput.New()
	s := textinput.DefaultStyles(true)
	st := m.styles
	s.Focused.Prompt, s.Focused.Text, s.Focused.Placeholder = st.Accent, st.Text, st.Subtle
	s.Blurred = s.Focused
	s.Cursor.Color, s.Cursor.Blink = st.Palette.Accent, false
	in.SetStyles(s)
	return &replayState{tl: tl, keys: defaultReplayKeys(), speed: defaultSpeed, tools: -1, sessionAt: -1, hold: -1,
		prompt: in, warnings: tl.Warnings()}
}

// freshPanes replaces the panes by empty ones (a rebuild), keeping focus
// and sizes.
func (m *Model) freshPanes() {
	st := m.styles
	m.pending = pending.New(st)
	m.frames = frames.New(st, frames.Options{Capacity: m.opts.FrameCapacity})
	m.frames.SetOrigin(m.rp.tl.Header().Start)
	m.stderr = stderr.New(st)
	m.tools = tools.New(st, tools.Options{})
	m.features = features.New(st)
	m.timeline = timeline.New(st)
	m.panes = [paneCount]pane{m.pending, m.frames, m.tools, m.stderr, nil, m.features, m.timeline}
	m.relayout()
}

// seek sends the cursor to position k (clamped) and starts loading.
func (m *Model) seek(k int) tea.Cmd {
	rp := m.rp
	rp.hold = -1
	rp.want = max(min(k, rp.tl.Len()), 0)
	return m.nextLoad()
}

// seekTime sends the cursor to offset d: the events up to d have happened,
// and the clock is at d.
func (m *Model) seekTime(d time.Duration) tea.Cmd {
	cmd := m.seek(m.rp.tl.At(d))
	m.rp.hold = max(min(d, m.rp.tl.End()), 0) // not past the end of the capture
	if cmd == nil {
		m.rp.now = max(m.rp.tl.Time(m.rp.pos), m.rp.hold)
		m.replayNow()
	}
	return cmd
}

// nextLoad starts the command that brings the panes from pos to want:
// forward by reading the events in between, or (backwards, or far ahead)
// by a rebuild from the nearest checkpoint (replay.Timeline.Plan).
func (m *Model) nextLoad() tea.Cmd {
	rp := m.rp
	if rp.loading || rp.want == rp.pos {
		return nil
	}
	rp.loading = true
	tl, from, to, haveTools, haveSess := rp.tl, rp.pos, rp.want, rp.tools, rp.sessionAt
	rebuild := to < from || to-from > replay.Warm
	return func() tea.Msg {
		msg := replayLoadedMsg{base: from, to: to}
		if rebuild {
			carry, start := tl.Plan(to)
			msg.base = -1
			msg.evs = tl.Events(carry)
			rest, err := tl.Read(start, to)
			if err != nil {
				return replayLoadedMsg{err: err}
			}
			msg.evs = append(msg.evs, rest...)
		} else {
			evs, err := tl.Read(from, to)
			if err != nil {
				return replayLoadedMsg{err: err}
			}
			msg.evs = evs
		}
		if n := tl.ToolsAt(to); rebuild || n != haveTools {
			msg.toolsSet, msg.toolsN = true, n
			msg.tools, msg.toolsErr = tl.Tools(n)
		}
		if p := tl.SessionAt(to); p != haveSess {
			msg.sessAt = p
			msg.session = &capture.Record{}
			if p >= 0 {
				rec, err := tl.Session(p)
				if err == nil {
					*msg.session = rec
				}
			}
		}
		return msg
	}
}

// replayLoaded applies a load's events and starts the next load if the
// cursor has moved on meanwhile.
func (m *Model) replayLoaded(msg replayLoadedMsg) tea.Cmd {
	rp := m.rp
	rp.loading = false
	if msg.err != nil {
		rp.note = "cannot read the capture: " + msg.err.Error()
		rp.playing, rp.want = false, rp.pos
		return nil
	}
	if msg.toolsErr != nil {
		rp.note = "cannot read the tool list: " + msg.toolsErr.Error()
	}
	switch {
	case msg.base == -1:
		m.freshPanes()
	case msg.base != rp.pos:
		return m.nextLoad() // cannot happen: one load at a time
	}
	for _, p := range m.panes {
		if p != nil {
			p.Apply(msg.evs)
		}
	}
	rp.pos = msg.to
	if msg.toolsSet {
		if msg.toolsN > 0 { // before the first tools/list answer, the pane waits for one
			m.tools.SetTools(msg.tools)
		}
		rp.tools = msg.toolsN
	}
	if msg.session != nil {
		rp.session, rp.sessionAt = *msg.session, msg.sessAt
	}
	if !rp.playing || rp.now < rp.tl.Time(rp.pos) {
		rp.now = max(rp.tl.Time(rp.pos), rp.hold)
	}
	m.replayNow()
	return m.nextLoad()
}

// replayNow gives the panes the cursor's time.
func (m *Model) replayNow() {
	t := m.rp.tl.Header().Start.Add(m.rp.now)
	m.now = t
	for _, p := range m.panes {
		if p != nil {
			p.SetNow(t)
		}
	}
}

// replayTick is the playback clock.
func replayTick(gen int) tea.Cmd {
	return tea.Tick(replayTickEvery, func(t time.Time) tea.Msg { return replayTickMsg{gen: gen, t: t} })
}

// play starts or pauses playback; at the end, play starts again from the
// beginning.
func (m *Model) play() tea.Cmd {
	rp := m.rp
	if rp.playing {
		rp.playing = false
		rp.now = rp.tl.Time(rp.want)
		return nil
	}
	rp.playing, rp.note = true, ""
	rp.tickGen++
	rp.lastTick = m.opts.Now()
	var cmd tea.Cmd
	if rp.want >= rp.tl.Len() {
		rp.now = 0
		cmd = m.seek(0)
	}
	return tea.Batch(cmd, replayTick(rp.tickGen))
}

// replayTicked advances the playback clock by the time elapsed times the
// speed, and the cursor to the events that happened by then.
func (m *Model) replayTicked(msg replayTickMsg) tea.Cmd {
	rp := m.rp
	if !rp.playing || msg.gen != rp.tickGen {
		return nil
	}
	elapsed := msg.t.Sub(rp.lastTick)
	rp.lastTick = msg.t
	target := rp.want
	if sp := speedOf(rp.speed); sp == 0 {
		target += instantBatch
	} else {
		rp.now += time.Duration(float64(elapsed) * sp)
		target = max(rp.tl.At(rp.now), rp.want)
	}
	if target >= rp.tl.Len() {
		target, rp.playing = rp.tl.Len(), false
		rp.now = rp.tl.End()
	}
	if speedOf(rp.speed) == 0 {
		rp.now = rp.tl.Time(target)
	}
	cmd := m.seek(target)
	m.replayNow()
	if !rp.playing {
		return cmd
	}
	return tea.Batch(cmd, replayTick(rp.tickGen))
}

// step moves the cursor n events (paused).
func (m *Model) step(n int) tea.Cmd {
	m.rp.playing = false
	m.rp.note = ""
	return m.seek(m.rp.want + n)
}

// jumpProblem goes to the next (dir 1) or previous (dir -1) error or
// protocol violation: the cursor stops just after it.
func (m *Model) jumpProblem(dir int) tea.Cmd {
	rp := m.rp
	rp.playing = false
	var p int
	if dir > 0 {
		p = rp.tl.NextProblem(rp.want)
	} else {
		p = rp.tl.PrevProblem(rp.want - 1)
	}
	if p < 0 {
		what := "after"
		if dir < 0 {
			what = "before"
		}
		rp.note = fmt.Sprintf("no error or violation %s the cursor (%d in the capture)", what, rp.tl.Problems())
		return nil
	}
	rp.note = ""
	return m.seek(p + 1)
}
