package ui

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/surface"
	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// Watched is a session sonde watches but does not drive: a host's session
// through sonde tap, followed in its recording as it grows (sonde watch).
// Its events are the tap's, with the same verdicts as a driven session's
// (both directions' requests tracked by id). Each method is called from a
// command, never from Update.
type Watched interface {
	// Next blocks until events were recorded after those it returned
	// before, and returns them (at most max), with how many the tap's
	// observation missed so far; ok is false once the recording ended and
	// every event was returned.
	Next(max int) (evs []client.Event, missed uint64, ok bool)
	// Inject sends a request of sonde's into the session (between the
	// host's lines, under an id of the tap's: the host never sees its
	// answer) and returns that id (as the recording shows it; invalid
	// when the tap did not say) and the server's result, or an error: a
	// *client.Error (MCP_ERROR with the JSON-RPC error the server
	// answered, or why there was no answer).
	Inject(ctx context.Context, method string, params any) (jsonrpc.ID, json.RawMessage, error)
	// NoInject says why requests cannot be injected into this session
	// ("" when they can): it ended, or its tap takes none.
	NoInject() string
}

// InjectTimeout bounds a request injected from the UI.
const InjectTimeout = 60 * time.Second

// watchState is the watch mode's part of the root (Options.Watch).
type watchState struct {
	m   *Model // the root it shows the session in
	src Watched
	// known is what the session showed of its server: the host's
	// handshake and lists, and sonde's injected ones (a session sonde does
	// not drive lists nothing itself until asked). It takes late answers:
	// a list the host gave up on is still the server's.
	known surface.Known
	// shown is when the listings the panes show came (known.At when they
	// were given them).
	shown map[string]surface.Listing
	// listed is what the Features pane was given last.
	listed features.ListedMsg
	ended  bool   // the recording ended
	note   string // what the status bar says of the last refused action
}

// watchEventsMsg carries events read from a watched session.
type watchEventsMsg struct {
	evs    []client.Event
	missed uint64
	ended  bool
}

// injectedMsg is the outcome of a request injected from the UI whose
// answer the root shows itself (tools/list).
type injectedMsg struct {
	method string
	err    error
}

// waitWatch is the one command through which a watched session's events
// enter, as waitEvents is for a client's.
func waitWatch(src Watched) tea.Cmd {
	return func() tea.Msg {
		evs, missed, ok := src.Next(maxBatch)
		return watchEventsMsg{evs: evs, missed: missed, ended: !ok}
	}
}

// newWatchMode sets the root up for Options.Watch.
func newWatchMode(m *Model) *watchState {
	w := &watchState{m: m, src: m.opts.Watch, known: surface.Known{Late: true}}
	w.m.conn.starting = false
	w.m.tools.SetUnavailable("No tools yet: the host has not listed them.", "r lists them now (sonde's own tools/list, injected into the session)")
	if why := w.m.opts.Watch.NoInject(); why != "" {
		w.m.tools.SetUnavailable("No tools: the host did not list them.", why)
	}
	return w
}

// watchMsg handles, in watch mode, the messages of the session's life:
// events from the recording, and the outcomes of injected requests whose
// answers the panes get through the recording. ok is false for a message
// it leaves to the usual routing.
func (w *watchState) watchMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case watchEventsMsg:
		return w.watchEvents(msg), true
	case injectedMsg:
		if msg.err != nil {
			w.note = msg.method + ": " + msg.err.Error()
		}
		return nil, true
	case featuresListedMsg:
		// The answers reached the pane through the recording; an error
		// did not.
		if msg.Err != nil {
			w.note = "features: " + msg.Err.Error()
		}
		return nil, true
	}
	return nil, false
}

// injected is the method action a injects into a watched session.
func injected(a action) string {
	switch a {
	case actCall:
		return mcp.MethodToolsCall
	case actListTools:
		return mcp.MethodToolsList
	case actRead:
		return mcp.MethodResourcesRead
	case actListFeatures:
		return mcp.MethodResourcesList
	}
	return mcp.MethodPromptsGet
}

// Can allows what can be injected through the tap while the session is
// live, and answering the server's requests; the host's own requests and
// server, its roots and its recording are not sonde's.
func (w *watchState) Can(a action) (bool, string) {
	switch a {
	case actAnswer:
		return true, ""
	case actCancel, actCancelTask:
		return false, "the host's requests are the host's to cancel: sonde only watches them"
	case actSubscribe, actSetLevel, actComplete:
		return false, "not in a watched session yet: tools (call, list), resources (list, read) and prompts (list, get) are"
	case actCall, actListTools, actRead, actListFeatures, actGetPrompt:
		if why := w.noInject(); why != "" {
			return false, injected(a) + ": " + why
		}
		return true, ""
	case actRestart:
		return false, "the host starts and stops its server: sonde only watches the session"
	case actRecord:
		return false, "the tap records this session already"
	case actRoots:
		return false, "the roots are the host's to give"
	case actFaults:
		if w.m.watchFaults() == nil {
			return false, "this tap takes no fault rules"
		}
		return true, ""
	case actBreaks, actBreak:
		if w.m.opts.Breaks == nil {
			return false, "this tap holds no frames (its socket offers no sonde/breaks/*)"
		}
		return true, ""
	case actExport:
		if w.m.opts.Export == nil || w.m.opts.Capture == "" {
			return false, "this session's recording is not known here"
		}
		return true, ""
	}
	return false, "only with several servers (sonde --all)" // actStart, actServer, actReport
}

func (w *watchState) refuse(why string) { w.note = why }

// do injects the request through the tap.
func (w *watchState) do(_ action, msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case frames.BreakMsg:
		return w.m.brk.add(msg.Expr)
	case pending.BreakMsg:
		return w.m.brk.add(msg.Expr)
	case tools.CallMsg:
		return w.injectCmd(func(ctx context.Context, src Watched) tea.Msg {
			started := time.Now()
			id, raw, err := src.Inject(ctx, mcp.MethodToolsCall, mcp.CallToolParams{Name: msg.Tool, Arguments: msg.Args})
			res := tools.ResultMsg{Tool: msg.Tool, ID: id, Args: msg.Args, Raw: raw, Err: err, Latency: time.Since(started)}
			if err == nil {
				res.Result, res.Err = client.ToolResult(msg.Tool, raw)
			}
			return res
		})
	case tools.RefreshMsg:
		return w.injectCmd(func(ctx context.Context, src Watched) tea.Msg {
			// The answer's frame reaches the Tools pane through the
			// recording, as the host's would.
			_, _, err := src.Inject(ctx, mcp.MethodToolsList, struct{}{})
			return injectedMsg{method: mcp.MethodToolsList, err: err}
		})
	case features.ReadMsg:
		return w.injectCmd(func(ctx context.Context, src Watched) tea.Msg {
			res, raw, err := injectResult[mcp.ReadResourceResult](ctx, src, mcp.MethodResourcesRead, mcp.URIParams{URI: msg.URI}, msg.URI)
			return features.ReadResultMsg{URI: msg.URI, Result: res, Raw: raw, Err: err}
		})
	}
	cmd, _ := w.watchFeatureMsg(msg)
	return cmd
}

// injectCmd runs do in a command with the injection's deadline (Can
// decided that it can be injected).
func (w *watchState) injectCmd(do func(context.Context, Watched) tea.Msg) tea.Cmd {
	w.note = ""
	src := w.src
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), InjectTimeout)
		defer cancel()
		return do(ctx, src)
	}
}

// noInject says why nothing can be injected now ("" when it can).
func (w *watchState) noInject() string {
	if w.ended {
		return "the session ended: there is no server to send it to (a session is read as it was recorded)"
	}
	return w.src.NoInject()
}

// watchEvents applies a batch read from the recording and re-arms the
// reader (until the recording ended).
func (w *watchState) watchEvents(msg watchEventsMsg) tea.Cmd {
	breaks := w.m.brk.noted(msg.evs, w.m.now)
	if len(msg.evs) > 0 {
		for _, p := range w.m.panes {
			if p != nil {
				p.Apply(msg.evs)
			}
		}
		w.m.stats.apply(msg.evs)
		for _, ev := range msg.evs {
			if ev.Kind == client.EvProcess && ev.Proc != nil {
				w.m.conn.follow(ev.Proc)
			}
			w.known.Apply(ev)
		}
		w.showKnown()
	}
	w.m.stats.missed = msg.missed
	if msg.ended {
		w.ended = true
		return breaks
	}
	return tea.Batch(waitWatch(w.src), breaks)
}

// watchPart is the status bar's word on the watched session: live (and
// whether requests can be injected), or ended; and the last refusal.
func (w *watchState) watchPart() string {
	st := w.m.styles
	var parts []string
	switch why := w.noInject(); {
	case w.ended:
		parts = append(parts, st.Subtle.Render("ended"))
	case why != "":
		parts = append(parts, st.OK.Render("live")+st.Subtle.Render(" (no inject)"))
	default:
		parts = append(parts, st.OK.Render("live"))
	}
	if w.note != "" {
		parts = append(parts, st.Warn.Render(textfmt.Escape(w.note))) // it may hold a server's error message
	}
	return strings.Join(parts, " ")
}
