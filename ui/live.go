package ui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// live is the mode of a server sonde starts and drives itself: every
// request goes to its client (the current Conn of the root).
type live struct {
	m    *Model
	note string // why the last action was refused, for the status bar
}

// Can allows what a driven session does; the fleet's keys, a watched
// tap's fault rules and (without a recorder) recording are not here.
func (l *live) Can(a action) (bool, string) {
	switch a {
	case actStart:
		return false, "a server is started by its row in the fleet inspector only (sonde --all)"
	case actServer, actReport:
		return false, "only with several servers (sonde --all)"
	case actFaults:
		return false, "fault rules are a watched tap's (sonde watch)"
	case actRecord:
		if l.m.opts.Recorder == nil {
			return false, "this session has no recorder"
		}
	case actBreaks, actBreak:
		if l.m.opts.Breaks == nil {
			return false, "this session holds no frames"
		}
	case actExport:
		if l.m.opts.Export == nil {
			return false, "this session cannot export"
		}
		if l.m.rec.Path == "" {
			return false, "nothing recorded to export: R records the session (or --record FILE), then X"
		}
	}
	return true, ""
}

func (l *live) refuse(why string) { l.note = why }

// do sends the request to the server's client (nothing while none runs).
func (l *live) do(a action, msg tea.Msg) tea.Cmd {
	m := l.m
	c := m.sess.Client
	l.note = ""
	switch msg := msg.(type) {
	case frames.BreakMsg:
		return m.brk.add(msg.Expr)
	case pending.BreakMsg:
		return m.brk.add(msg.Expr)
	}
	if c == nil {
		return nil
	}
	switch msg := msg.(type) {
	case pending.CancelMsg:
		return cancelCmd(c, msg.ID)
	case pending.CancelTaskMsg:
		return cancelTaskCmd(c, msg.TaskID)
	case tools.CallMsg:
		return m.callTool(msg)
	case tools.RefreshMsg:
		return listToolsCmd(m.gen, c)
	case features.RefreshMsg:
		return listFeaturesCmd(m.gen, c)
	case features.ReadMsg:
		return func() tea.Msg {
			res, raw, err := c.ReadResource(context.Background(), msg.URI)
			return features.ReadResultMsg{URI: msg.URI, Result: res, Raw: raw, Err: err}
		}
	case features.GetPromptMsg:
		return func() tea.Msg {
			res, _, err := c.GetPrompt(context.Background(), msg.Name, msg.Args)
			return features.PromptResultMsg{Name: msg.Name, Result: res, Err: err}
		}
	case features.SubscribeMsg:
		return func() tea.Msg {
			var err error
			if msg.On {
				err = c.SubscribeResource(context.Background(), msg.URI)
			} else {
				err = c.UnsubscribeResource(context.Background(), msg.URI)
			}
			return features.SubscribedMsg{URI: msg.URI, On: msg.On, Err: err}
		}
	case features.SetLevelMsg:
		return func() tea.Msg {
			return features.LevelSetMsg{Level: msg.Level, Err: c.SetLogLevel(context.Background(), msg.Level)}
		}
	case features.CompleteMsg:
		return func() tea.Msg {
			comp, err := c.Complete(context.Background(), msg.Ref, msg.Argument, msg.Context)
			return features.CompletionMsg{Argument: msg.Argument, Completion: comp, Err: err}
		}
	}
	return nil
}
