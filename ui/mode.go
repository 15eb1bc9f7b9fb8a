package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// action is what a key or a pane asks of the session behind the root.
type action int

// The actions a mode decides on (mode.Can).
const (
	actCancel       action = iota // cancel a request in flight (pending.CancelMsg)
	actCancelTask                 // cancel a task (pending.CancelTaskMsg)
	actAnswer                     // answer a server's request (pending.AnswerMsg)
	actCall                       // call a tool (tools.CallMsg)
	actListTools                  // list the tools again (tools.RefreshMsg)
	actStart                      // start one server of a fleet (tools.StartMsg)
	actListFeatures               // list resources and prompts again (features.RefreshMsg)
	actRead                       // read a resource (features.ReadMsg)
	actGetPrompt                  // get a prompt (features.GetPromptMsg)
	actSubscribe                  // subscribe to a resource (features.SubscribeMsg)
	actSetLevel                   // set the server's log level (features.SetLevelMsg)
	actComplete                   // complete an argument (features.CompleteMsg)
	actRestart                    // the restart key
	actRecord                     // the record key
	actRoots                      // the roots editor's key
	actFaults                     // the fault rules' key
	actServer                     // the key that picks the server the panes show
	actReport                     // the failure report's key
	actBreaks                     // the held frames' and breakpoints' keys (H, B)
	actBreak                      // set a breakpoint from a row (frames.BreakMsg, pending.BreakMsg)
	actExport                     // the HTML export's key (X)
)

// mode is one way of having a session behind the root Model: a server
// sonde drives (live), a host's session sonde watches through its tap
// (watch), several servers at once (fleet), a capture read back (replay).
// The root asks the mode before it does anything to the session: Can
// decides, and its reason is what the status bar shows when a pane's
// request or a key is refused, and what the help screen shows beside a
// disabled key.
//
// To add a mode (breakpoints, #28, is the next): write a type that
// implements mode, give Options a field for it and construct it in
// newMode; answer Can for every action. The root's one switch from pane
// requests to actions (requestAction) and its key bindings (syncKeys) then
// follow the new mode with no branch of their own; do performs what Can
// allowed.
type mode interface {
	// Can reports whether the session can do a now, and if not why (a
	// sentence for the status bar).
	Can(a action) (ok bool, why string)
	// do performs the pane request msg, of action a, which Can allowed.
	do(a action, msg tea.Msg) tea.Cmd
	// refuse shows why an action was refused, in the mode's part of the
	// status bar.
	refuse(why string)
}

// newMode is the mode Options ask for: a replay, a watched session, a
// fleet, or (by default) a live session.
func newMode(m *Model) mode {
	o := m.opts
	switch {
	case o.Replay != nil:
		m.rp = newReplayState(m, o.Replay)
		return m.rp
	case o.Watch != nil:
		m.wt = newWatchMode(m)
		return m.wt
	case o.Servers != nil:
		m.fl = newFleet(m, o.Servers)
		return m.fl
	}
	m.lv = &live{m: m}
	return m.lv
}

// requestAction is the root's one switch from what a pane asks of the
// session to an action; ok is false for a message that asks nothing of it.
func requestAction(msg tea.Msg) (a action, ok bool) {
	switch msg.(type) {
	case pending.CancelMsg:
		return actCancel, true
	case pending.CancelTaskMsg:
		return actCancelTask, true
	case pending.AnswerMsg:
		return actAnswer, true
	case tools.CallMsg:
		return actCall, true
	case tools.RefreshMsg:
		return actListTools, true
	case tools.StartMsg:
		return actStart, true
	case features.RefreshMsg:
		return actListFeatures, true
	case features.ReadMsg:
		return actRead, true
	case features.GetPromptMsg:
		return actGetPrompt, true
	case features.SubscribeMsg:
		return actSubscribe, true
	case features.SetLevelMsg:
		return actSetLevel, true
	case features.CompleteMsg:
		return actComplete, true
	case frames.BreakMsg, pending.BreakMsg:
		return actBreak, true
	}
	return 0, false
}

// request does a pane's request through the mode, or shows why not.
func (m *Model) request(a action, msg tea.Msg) tea.Cmd {
	if ok, why := m.mode.Can(a); !ok {
		if ans, isAns := msg.(pending.AnswerMsg); isAns && ans.Server != "" {
			why += " " + ans.Server // the fleet names the server's own inspector
		}
		m.mode.refuse(why)
		return nil
	}
	if ans, isAns := msg.(pending.AnswerMsg); isAns {
		m.openAsk(ans.ID) // a dialog of the root's, whatever the mode
		return nil
	}
	return m.mode.do(a, msg)
}

// keyAction pairs a global key with the action it asks for.
type keyAction struct {
	b *key.Binding
	a action
}

// keyActions are the global keys whose use the mode decides.
func (k *keyMap) keyActions() []keyAction {
	return []keyAction{{&k.Restart, actRestart}, {&k.Record, actRecord}, {&k.Roots, actRoots},
		{&k.Faults, actFaults}, {&k.Server, actServer}, {&k.Report, actReport}, {&k.Held, actBreaks}, {&k.Breakpoints, actBreaks},
		{&k.Export, actExport}}
}

// syncKeys enables each global key the mode allows, and disables the
// others (the help screen lists them with the mode's reason).
func syncKeys(k *keyMap, md mode) {
	for _, ka := range k.keyActions() {
		ok, _ := md.Can(ka.a)
		ka.b.SetEnabled(ok)
	}
}

// refusedKey shows why a global key does nothing here, when msg is one the
// mode refuses and no enabled global key has it; ok reports that it was.
func (m *Model) refusedKey(msg tea.KeyPressMsg) bool {
	var why string
	for _, ka := range m.keys.keyActions() {
		if ka.b.Enabled() && key.Matches(msg, *ka.b) {
			return false
		}
		if ok, w := m.mode.Can(ka.a); !ok && why == "" && matchesKeys(msg, *ka.b) {
			why = ka.b.Help().Key + ": " + w
		}
	}
	if why == "" {
		return false
	}
	m.mode.refuse(why)
	return true
}

// matchesKeys reports whether msg is one of b's keys, enabled or not.
func matchesKeys(msg tea.KeyPressMsg, b key.Binding) bool {
	b.SetEnabled(true)
	return key.Matches(msg, b)
}

// disabledHelp lists the global keys the mode refuses, each with why, for
// the help screen (a key once, and not when another binding of it works).
func disabledHelp(k *keyMap, md mode) []string {
	kas := k.keyActions()
	seen := map[string]bool{}
	for _, ka := range kas {
		seen[ka.b.Help().Key] = seen[ka.b.Help().Key] || ka.b.Enabled()
	}
	var out []string
	last := ""
	for _, ka := range kas {
		name := ka.b.Help().Key
		if ok, why := md.Can(ka.a); !ok && !seen[name] {
			seen[name] = true
			if why == last && len(out) > 0 { // keys refused for one reason share a line
				prev := out[len(out)-1]
				out[len(out)-1] = prev[:len(prev)-len(why)-2] + ", " + name + ": " + why
				continue
			}
			out = append(out, name+": "+why)
			last = why
		}
	}
	return out
}
