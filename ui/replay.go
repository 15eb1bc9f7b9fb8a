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
	m    *Model // the root it shows the capture in
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
	return &replayState{m: m, tl: tl, keys: defaultReplayKeys(), speed: defaultSpeed, tools: -1, sessionAt: -1, hold: -1,
		prompt: in, warnings: tl.Warnings()}
}

// freshPanes replaces the panes by empty ones (a rebuild), keeping focus
// and sizes.
func (r *replayState) freshPanes() {
	st := r.m.styles
	r.m.pending = pending.New(st)
	r.m.frames = frames.New(st, frames.Options{Capacity: r.m.opts.FrameCapacity})
	r.m.frames.SetOrigin(r.tl.Header().Start)
	r.m.stderr = stderr.New(st)
	r.m.tools = tools.New(st, tools.Options{})
	r.m.features = features.New(st)
	r.m.timeline = timeline.New(st)
	r.m.panes = [paneCount]pane{r.m.pending, r.m.frames, r.m.tools, r.m.stderr, nil, r.m.features, r.m.timeline}
	r.m.relayout()
}

// seek sends the cursor to position k (clamped) and starts loading.
func (r *replayState) seek(k int) tea.Cmd {
	r.hold = -1
	r.want = max(min(k, r.tl.Len()), 0)
	return r.nextLoad()
}

// seekTime sends the cursor to offset d: the events up to d have happened,
// and the clock is at d.
func (r *replayState) seekTime(d time.Duration) tea.Cmd {
	cmd := r.seek(r.tl.At(d))
	r.hold = max(min(d, r.tl.End()), 0) // not past the end of the capture
	if cmd == nil {
		r.now = max(r.tl.Time(r.pos), r.hold)
		r.replayNow()
	}
	return cmd
}

// nextLoad starts the command that brings the panes from pos to want:
// forward by reading the events in between, or (backwards, or far ahead)
// by a rebuild from the nearest checkpoint (replay.Timeline.Plan).
func (r *replayState) nextLoad() tea.Cmd {
	if r.loading || r.want == r.pos {
		return nil
	}
	r.loading = true
	tl, from, to, haveTools, haveSess := r.tl, r.pos, r.want, r.tools, r.sessionAt
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
func (r *replayState) replayLoaded(msg replayLoadedMsg) tea.Cmd {
	r.loading = false
	if msg.err != nil {
		r.note = "cannot read the capture: " + msg.err.Error()
		r.playing, r.want = false, r.pos
		return nil
	}
	if msg.toolsErr != nil {
		r.note = "cannot read the tool list: " + msg.toolsErr.Error()
	}
	switch {
	case msg.base == -1:
		r.freshPanes()
	case msg.base != r.pos:
		return r.nextLoad() // cannot happen: one load at a time
	}
	for _, p := range r.m.panes {
		if p != nil {
			p.Apply(msg.evs)
		}
	}
	r.pos = msg.to
	if msg.toolsSet {
		if msg.toolsN > 0 { // before the first tools/list answer, the pane waits for one
			r.m.tools.SetTools(msg.tools)
		}
		r.tools = msg.toolsN
	}
	if msg.session != nil {
		r.session, r.sessionAt = *msg.session, msg.sessAt
	}
	if !r.playing || r.now < r.tl.Time(r.pos) {
		r.now = max(r.tl.Time(r.pos), r.hold)
	}
	r.replayNow()
	return r.nextLoad()
}

// replayNow gives the panes the cursor's time.
func (r *replayState) replayNow() {
	t := r.tl.Header().Start.Add(r.now)
	r.m.now = t
	for _, p := range r.m.panes {
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
func (r *replayState) play() tea.Cmd {
	if r.playing {
		r.playing = false
		r.now = r.tl.Time(r.want)
		return nil
	}
	r.playing, r.note = true, ""
	r.tickGen++
	r.lastTick = r.m.opts.Now()
	var cmd tea.Cmd
	if r.want >= r.tl.Len() {
		r.now = 0
		cmd = r.seek(0)
	}
	return tea.Batch(cmd, replayTick(r.tickGen))
}

// replayTicked advances the playback clock by the time elapsed times the
// speed, and the cursor to the events that happened by then.
func (r *replayState) replayTicked(msg replayTickMsg) tea.Cmd {
	if !r.playing || msg.gen != r.tickGen {
		return nil
	}
	elapsed := msg.t.Sub(r.lastTick)
	r.lastTick = msg.t
	target := r.want
	if sp := speedOf(r.speed); sp == 0 {
		target += instantBatch
	} else {
		r.now += time.Duration(float64(elapsed) * sp)
		target = max(r.tl.At(r.now), r.want)
	}
	if target >= r.tl.Len() {
		target, r.playing = r.tl.Len(), false
		r.now = r.tl.End()
	}
	if speedOf(r.speed) == 0 {
		r.now = r.tl.Time(target)
	}
	cmd := r.seek(target)
	r.replayNow()
	if !r.playing {
		return cmd
	}
	return tea.Batch(cmd, replayTick(r.tickGen))
}

// step moves the cursor n events (paused).
func (r *replayState) step(n int) tea.Cmd {
	r.playing = false
	r.note = ""
	return r.seek(r.want + n)
}

// jumpProblem goes to the next (dir 1) or previous (dir -1) error or
// protocol violation: the cursor stops just after it.
func (r *replayState) jumpProblem(dir int) tea.Cmd {
	r.playing = false
	var p int
	if dir > 0 {
		p = r.tl.NextProblem(r.want)
	} else {
		p = r.tl.PrevProblem(r.want - 1)
	}
	if p < 0 {
		what := "after"
		if dir < 0 {
			what = "before"
		}
		r.note = fmt.Sprintf("no error or violation %s the cursor (%d in the capture)", what, r.tl.Problems())
		return nil
	}
	r.note = ""
	return r.seek(p + 1)
}
