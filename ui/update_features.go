package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/features"
)

// featuresListedMsg carries the lists of the Features pane for session gen.
type featuresListedMsg struct {
	gen int
	features.ListedMsg
}

// handleFeatureMsg hands the Features pane the lists of the current
// session, and saves what it asks to save (its requests of the session
// are the mode's: live.do, watchState.do).
func (m *Model) handleFeatureMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case featuresListedMsg:
		if msg.gen == m.gen {
			m.features.SetLists(msg.ListedMsg)
		}
		return nil, true
	case features.SaveMsg:
		return func() tea.Msg {
			path, err := saveNew(m.opts.SaveDir, msg.URI, msg.Data)
			return features.SavedMsg{Path: path, Err: err}
		}, true
	}
	return nil, false
}

// featuresRefresh asks for the lists again when a list_changed arrived:
// resources and prompts for the Features pane, tools for the Tools pane
// (which then marks what changed).
func (m *Model) featuresRefresh(evs []client.Event) tea.Cmd {
	if m.sess.Client == nil {
		return nil
	}
	var cmds []tea.Cmd
	if m.features.WantsRefresh() {
		cmds = append(cmds, listFeaturesCmd(m.gen, m.sess.Client))
	}
	for _, ev := range evs {
		if ev.Kind == client.EvFrame && ev.Frame != nil && ev.Frame.Dir == client.In && ev.Frame.Msg.Method == mcp.MethodToolsChanged {
			cmds = append(cmds, listToolsCmd(m.gen, m.sess.Client))
			break
		}
	}
	return tea.Batch(cmds...)
}

// listFeaturesCmd lists resources, templates and prompts, each only when
// the server declared its capability. A server that answers
// resources/templates/list with -32601 has no templates.
func listFeaturesCmd(gen int, c *client.Client) tea.Cmd {
	return func() tea.Msg {
		ctx := context.Background()
		caps := c.ServerCaps()
		msg := features.ListedMsg{HasResources: caps.Resources != nil, HasPrompts: caps.Prompts != nil, HasCompletions: caps.Completions != nil}
		if msg.HasResources {
			msg.Resources, msg.Err = c.ListResources(ctx)
			if msg.Err == nil {
				var err error
				msg.Templates, err = c.ListResourceTemplates(ctx)
				var ce *client.Error
				if !errors.As(err, &ce) || ce.RPC == nil || ce.RPC.Code != jsonrpc.CodeMethodNotFound {
					msg.Err = err
				}
			}
		}
		if msg.HasPrompts {
			var err error
			msg.Prompts, err = c.ListPrompts(ctx)
			if msg.Err == nil {
				msg.Err = err
			}
		}
		return featuresListedMsg{gen: gen, ListedMsg: msg}
	}
}

// saveNew writes data to a new file in dir (the working directory when
// empty) named after the last segment of uri; an existing file is never
// overwritten: a number is added to the name instead.
func saveNew(dir, uri string, data []byte) (string, error) {
	base := uri
	if i := strings.LastIndexAny(base, "/:"); i >= 0 {
		base = base[i+1:]
	}
	base = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, base)
	base = strings.TrimLeft(base, ".")
	if base == "" {
		base = "resource"
	}
	if dir == "" {
		dir = "."
	}
	for n := 0; n < 1000; n++ {
		name := base
		if n > 0 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		path := dir + string(os.PathSeparator) + name
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return path, err
	}
	return "", fmt.Errorf("no free file name for %s in %s", base, dir)
}
