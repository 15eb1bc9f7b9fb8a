package lesson

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// HoldRule is the breakpoint the hold step sets: the answers to its own
// two echo calls (their values carry the word), nothing else.
const HoldRule = "dir:in kind:response tool:echo heldbyyou"

// holdIntro is the narration before the hold step: the Held dialog covers
// the lesson while it is open.
const holdIntro = "sonde tap reversed answers by a rule. Now reverse two yourself, by hand.\n\n" +
	"Next, a breakpoint (" + HoldRule + ") holds the server's answers to two echo calls, \"first\" and then " +
	"\"second\". The Held dialog opens over the panes with both, h1 and h2, each with the seconds left before " +
	"it goes on by itself.\n\nLet the second go first: ↓ to h2 and f, then f on h1. The dialog closes once " +
	"both are let go.\n\nPress space to send the two calls."

// holdAct sets the breakpoint and sends the two calls whose answers it
// holds (the Held dialog opens over the panes).
func (m *Model) holdAct() tea.Cmd {
	if m.opts.Hold == nil {
		m.holdErr = errors.New("this session holds no frames")
		return nil
	}
	if m.holdErr = m.opts.Hold(HoldRule); m.holdErr != nil {
		return nil
	}
	m.call("first", "echo", map[string]any{"value": "heldbyyou-first"}, 2*m.opts.PendingLong)
	// The second answers a little later, so that it is held second (h2).
	m.call("second", "echo", map[string]any{"value": "heldbyyou-second", "delay_ms": 300}, 2*m.opts.PendingLong)
	return nil
}

// holdText narrates the hold step.
func (m *Model) holdText() string {
	if m.holdErr != nil {
		return "This step holds two answers for you to let go in the order you choose, but it cannot here: " +
			m.holdErr.Error() + ".\n\nPress space to go on."
	}
	return fmt.Sprintf("The answers to id %s (\"first\") and id %s (\"second\") were held (H shows what is still held; "+
		"↓ to h2 and f, then f on h1).\n\nFrames shows them arrive in the order you let them go, and each settled its "+
		"own id: sonde matched them by id, not by order.\n\nfirst: %s    second: %s\n\nPress space once both have resolved.",
		m.id("first"), m.id("second"), m.outcome("first"), m.outcome("second"))
}
