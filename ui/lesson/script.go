package lesson

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// step is one page of the lesson: its narration (which may show live
// state) and the action taken when the user arrives at it.
type step struct {
	title string
	text  func(m *Model) string
	act   func(m *Model) tea.Cmd
}

func none(*Model) tea.Cmd { return nil }

// Titles are the titles of the lesson's steps, in order (what sonde demo
// --text lists of the steps it does not narrate).
func Titles() []string {
	out := make([]string, len(script))
	for i, s := range script {
		out[i] = s.title
	}
	return out
}

// script is the lesson. Step 0 is shown at start; Next runs the act of the
// step it moves to.
var script = []step{
	{
		title: "responses are matched by id",
		text: func(m *Model) string {
			return "sonde started its fixture server and ran the handshake (look at Frames: " +
				"initialize went out as id 1 and came back resolved).\n\n" +
				"An MCP server may answer requests in any order. A client must match each answer " +
				"to its request by the id it carries, never by arrival order.\n\n" +
				"Press space to send two calls at once: a slow one and a fast one."
		},
		act: none,
	},
	{
		title: "two calls in flight",
		text: func(m *Model) string {
			return fmt.Sprintf("Sent id %s (echo \"slow\", answers after %s) and id %s (echo \"fast\").\n\n"+
				"Pending shows both. The server answers id %s first: Frames shows it resolved, "+
				"while id %s keeps waiting in Pending.\n\n"+
				"slow: %s    fast: %s\n\nPress o to see what a FIFO client would have done. "+
				"Press space once slow has resolved.",
				m.id("slow"), m.opts.Slow, m.id("fast"), m.id("fast"), m.id("slow"), m.outcome("slow"), m.outcome("fast"))
		},
		act: func(m *Model) tea.Cmd {
			m.call("slow", "echo", map[string]any{"value": "slow", "delay_ms": m.opts.Slow.Milliseconds()}, 0)
			m.call("fast", "echo", map[string]any{"value": "fast"}, 0)
			return nil
		},
	},
	{
		title: "both resolved",
		text: func(m *Model) string {
			return fmt.Sprintf("slow: %s    fast: %s\n\n"+
				"Each answer settled exactly the entry with its own id, and left the other untouched. "+
				"A FIFO client would have handed \"fast\" to the slow call and \"slow\" to the fast one "+
				"(press o).\n\nNext: the same on real traffic, with the answers reversed on purpose. Press space.", m.outcome("slow"), m.outcome("fast"))
		},
		act: none,
	},
	{
		title: "answers reversed by sonde tap",
		text:  func(m *Model) string { return m.reorderText() },
		act:   func(m *Model) tea.Cmd { return m.reorderCmd() },
	},
	{
		title: "a timeout, then a late answer",
		text: func(m *Model) string {
			return fmt.Sprintf("id %s has a %s timeout; the server takes %s and ignores cancellation.\n\n"+
				"At the deadline the call fails with MCP_TIMEOUT and sonde sends notifications/cancelled. "+
				"When the answer arrives anyway, Frames marks it late: the id is retired, so it is "+
				"matched to nothing. A FIFO client gave up on that request too, so the answer finds no one "+
				"waiting, and it hands it to the next request it sends: the wrong one (press o).\n\nlate call: %s\n\n"+
				"Press space when the late frame has appeared.", m.id("late"), m.opts.Timeout, m.opts.LateAnswer, m.outcome("late"))
		},
		act: func(m *Model) tea.Cmd {
			m.call("late", "echo", map[string]any{"value": "too late", "delay_ms": m.opts.LateAnswer.Milliseconds(), "ignore_cancel": true}, m.opts.Timeout)
			return nil
		},
	},
	{
		title: "a long call",
		text: func(m *Model) string {
			return fmt.Sprintf("id %s asks the server to wait %s. It is in Pending with its age and deadline.\n\n"+
				"A FIFO client would already have handed it the late answer of id %s: press o to see it go wrong.\n\n"+
				"Press space to cancel it (in the Pending pane, c does the same for any request).", m.id("long"), m.opts.PendingLong, m.id("late"))
		},
		act: func(m *Model) tea.Cmd {
			m.call("long", "echo", map[string]any{"value": "never", "delay_ms": m.opts.PendingLong.Milliseconds()}, 2*m.opts.PendingLong)
			return nil
		},
	},
	{
		title: "cancelled",
		text: func(m *Model) string {
			return fmt.Sprintf("id %s: %s.\n\nThe caller got MCP_ABORTED at once; notifications/cancelled "+
				"went out with the id and a reason (see Frames), and the server dropped the work without answering.\n\n"+
				"Next: a server that needs an answer from the client, in both protocol eras. Press space.", m.id("long"), m.outcome("long"))
		},
		act: func(m *Model) tea.Cmd {
			if id, ok := m.ids["long"]; ok {
				c := m.c
				return func() tea.Msg { c.Cancel(id, "cancelled by the lesson"); return nil }
			}
			return nil
		},
	},
	{
		title: "the server asks you",
		text: func(m *Model) string {
			return "So far sonde asked and the server answered. A server may also ask the client: " +
				"\"elicitation\" is a server's question for the user, a small form it sends while a call " +
				"of yours is still running.\n\n" +
				"Next, the confirm tool asks \"Proceed?\" before it answers. A dialog opens over the panes " +
				"and has the keyboard: space ticks confirm, ctrl+s accepts, ctrl+x declines, esc answers later; " +
				"answer it, then space moves the lesson on.\n\n" +
				"Press space to call confirm."
		},
		act: none,
	},
	{
		title: "a server request, then input_required",
		text:  func(m *Model) string { return m.erasText() },
		act: func(m *Model) tea.Cmd {
			return tea.Batch(m.callWait("confirm", "confirm", map[string]any{"message": "Proceed?"}), m.modernCmd())
		},
	},
	{
		title: "hold the answers yourself",
		text:  func(m *Model) string { return holdIntro },
		act:   none,
	},
	{
		title: "you hold the answers",
		text:  func(m *Model) string { return m.holdText() },
		act:   func(m *Model) tea.Cmd { return m.holdAct() },
	},
	{
		title: "the server crashes",
		text: func(m *Model) string {
			return fmt.Sprintf("Three slow calls (ids %s, %s, %s) were pending when the crash tool made the server "+
				"write half a line and exit.\n\nEvery pending request failed at once with MCP_PROCESS_EXIT "+
				"(exit code and stderr tail included): nothing waits forever. stderr shows the exit.\n\n"+
				"a: %s  b: %s  c: %s\n\nPress space to restart the server and keep experimenting.",
				m.id("a"), m.id("b"), m.id("c"), m.outcome("a"), m.outcome("b"), m.outcome("c"))
		},
		act: func(m *Model) tea.Cmd {
			for _, l := range []string{"a", "b", "c"} {
				m.call(l, "echo", map[string]any{"value": l, "delay_ms": m.opts.PendingLong.Milliseconds()}, 2*m.opts.PendingLong)
			}
			m.call("crash", "crash", map[string]any{"after_ms": m.opts.CrashAfter.Milliseconds()}, 0)
			return nil
		},
	},
	{
		title: "your turn",
		text: func(m *Model) string {
			return "The server was restarted (a new process and handshake; history kept).\n\n" +
				"Try the Tools pane: / to filter, enter to fill a tool's form and call it; several calls " +
				"can be in flight. Pending: c cancels, enter shows a request's frames. Frames: enter shows a " +
				"frame's JSON and raw bytes, / filters. ? lists every key."
		},
		act: func(m *Model) tea.Cmd {
			return func() tea.Msg { return RestartMsg{} }
		},
	},
}
