package ui

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/jsonrpc"
)

// replayKeys are the timeline's keys (`sonde replay`); they apply whatever
// pane has the focus, unless it captures typing.
type replayKeys struct {
	Play, Back, Forward, Faster, Slower, Start, End, Time, NextErr, PrevErr, Frame key.Binding
}

func defaultReplayKeys() replayKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return replayKeys{
		Play:    b([]string{"space"}, "space", "play/pause"),
		Back:    b([]string{"left", ","}, "←/,", "step back"),
		Forward: b([]string{"right", "."}, "→/.", "step"),
		Faster:  b([]string{"+", "="}, "+", "faster"),
		Slower:  b([]string{"-"}, "-", "slower"),
		Start:   b([]string{"<"}, "<", "start"),
		End:     b([]string{">"}, ">", "end"),
		Time:    b([]string{"t"}, "t", "jump to time"),
		NextErr: b([]string{"e"}, "e", "next error"),
		PrevErr: b([]string{"E", "shift+e"}, "E", "prev error"),
		Frame:   b([]string{"i"}, "i", "next frame of id"),
	}
}

// ShortHelp is the replay part of the help line.
func (k replayKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Play, k.Back, k.Forward, k.Faster, k.Slower, k.NextErr, k.Time, k.Frame}
}

// FullHelp lists every replay key.
func (k replayKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Play, k.Faster, k.Slower}, {k.Back, k.Forward, k.Start, k.End}, {k.Time, k.NextErr, k.PrevErr, k.Frame}}
}

// replayKey handles a timeline key; ok is false for other keys.
func (r *replayState) replayKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := &r.keys
	switch {
	case key.Matches(msg, k.Play):
		return r.play(), true
	case key.Matches(msg, k.Back):
		return r.step(-1), true
	case key.Matches(msg, k.Forward):
		return r.step(1), true
	case key.Matches(msg, k.Faster):
		r.speed = min(r.speed+1, speedCount-1)
	case key.Matches(msg, k.Slower):
		r.speed = max(r.speed-1, 0)
	case key.Matches(msg, k.Start):
		r.playing, r.note = false, ""
		return r.seek(0), true
	case key.Matches(msg, k.End):
		r.playing, r.note = false, ""
		return r.seek(r.tl.Len()), true
	case key.Matches(msg, k.NextErr):
		return r.jumpProblem(1), true
	case key.Matches(msg, k.PrevErr):
		return r.jumpProblem(-1), true
	case key.Matches(msg, k.Time):
		return r.ask(promptTime, "time> ", "1.5s, 2m, or #N for event N", ""), true
	case key.Matches(msg, k.Frame):
		id := ""
		if e, ok := r.m.pending.Selected(); ok && e.ID.IsValid() {
			id = e.ID.String()
		}
		return r.ask(promptID, "id> ", `3 or "abc"`, id), true
	default:
		return nil, false
	}
	return nil, true
}

// ask opens the prompt.
func (r *replayState) ask(kind promptKind, prompt, placeholder, value string) tea.Cmd {
	r.playing, r.note = false, ""
	r.asking = kind
	r.prompt.Prompt, r.prompt.Placeholder = prompt, placeholder
	r.prompt.SetValue(value)
	r.prompt.CursorEnd()
	r.prompt.SetWidth(max(min(r.m.width/2, 40), 8))
	return r.prompt.Focus()
}

// promptKey handles a key while the prompt is open: enter jumps, esc
// closes, the rest is typing.
func (r *replayState) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		r.asking = promptNone
		r.prompt.Blur()
		return nil
	case "enter":
		kind, text := r.asking, strings.TrimSpace(r.prompt.Value())
		r.asking = promptNone
		r.prompt.Blur()
		if kind == promptTime {
			return r.jumpTime(text)
		}
		return r.jumpID(text)
	}
	var cmd tea.Cmd
	r.prompt, cmd = r.prompt.Update(msg)
	return cmd
}

// jumpTime moves the cursor to a time since the capture's start (every
// event at or before it has happened), or to event N with "#N".
func (r *replayState) jumpTime(text string) tea.Cmd {
	if n, ok := strings.CutPrefix(text, "#"); ok {
		k, err := strconv.Atoi(n)
		if err != nil || k < 0 {
			r.note = fmt.Sprintf("%q: want #N, an event number", text)
			return nil
		}
		return r.seek(k)
	}
	d, err := parseOffset(text)
	if err != nil {
		r.note = err.Error()
		return nil
	}
	return r.seekTime(d)
}

// parseOffset reads a time since the capture's start: a Go duration
// ("1.5s", "2m3s", "250ms") or a number of seconds.
func parseOffset(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
		if ns := f * float64(time.Second); ns < 1<<63 {
			return time.Duration(ns), nil
		}
		return math.MaxInt64, nil // past the end of any capture (a conversion would wrap negative)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a time: want e.g. 1.5s, 2m3s or 250ms", s)
	}
	return d, nil
}

// jumpID moves the cursor just past the next frame that carries the id
// (3 for an integer id, "abc" or abc for a string id).
func (r *replayState) jumpID(text string) tea.Cmd {
	id, err := parseID(text)
	if err != nil {
		r.note = err.Error()
		return nil
	}
	n := r.tl.NextFrame(r.want, id)
	if n < 0 {
		r.note = fmt.Sprintf("no frame with id %s after the cursor", id)
		return nil
	}
	r.m.setFocus(paneFrames) // the frame is the newest there, and selected
	return r.seek(n + 1)
}

// parseID reads an id as typed: an integer, a JSON string, or bare text
// (a string id).
func parseID(s string) (jsonrpc.ID, error) {
	if s == "" {
		return jsonrpc.ID{}, fmt.Errorf("no id given")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return jsonrpc.Int(n), nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal([]byte(s), &str); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("%s is not a JSON string", s)
		}
		return jsonrpc.String(str), nil
	}
	return jsonrpc.String(s), nil
}

// Can refuses every request of a server: none runs in a replay.
func (r *replayState) Can(a action) (bool, string) {
	switch a {
	case actRecord:
		if r.m.opts.Recorder != nil {
			return true, ""
		}
		return false, "a replay records nothing: it reads a recording"
	case actRestart:
		return false, "a replay has no server to restart"
	case actServer, actReport:
		return false, "only with several servers (sonde --all)"
	case actFaults:
		return false, "fault rules are a watched tap's (sonde watch)"
	case actBreaks, actBreak:
		return false, "a replay holds nothing: its frames were sent long ago"
	case actExport:
		if r.m.opts.Export == nil || r.m.opts.Capture == "" {
			return false, "this replay's file is not known here"
		}
		return true, ""
	}
	return false, replayReadOnly
}

func (r *replayState) refuse(why string) { r.note = why }

func (r *replayState) do(action, tea.Msg) tea.Cmd { return nil }

// replayReadOnly is the note shown when a pane asks for something a replay
// cannot do (a call, a cancel, a refresh).
const replayReadOnly = "a replay is read-only: no server runs, nothing is sent"
