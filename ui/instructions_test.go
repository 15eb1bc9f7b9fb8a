package ui

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/golden"
)

// hostileInstructions are a server's instructions with what must never
// reach the terminal as it came: an OSC title, a screen clear, C1.
const hostileInstructions = "Use search before open.\x1b]0;pwned\x07 Never call delete without asking.\x1b[2J\x9b\n" +
	"Paths are relative to the project root. Results are paged: pass the cursor back to get the next page. " +
	"Rate limit: 10 calls a second; a 429 answer means wait and retry."

// On connect the server's instructions take the help line (the panes keep
// their place), escaped, until a key; the help screen has them whole,
// wrapped, above the keys. Goldens at 80x24.
func TestInstructionsOnConnect(t *testing.T) {
	hs := newHarness(t, 80, 24)
	hs.send(startedMsg{gen: hs.m.gen, sess: Conn{Client: hs.c, Sub: hs.sub}})
	res := initResult()
	res.Instructions = hostileInstructions
	hs.send(initializedMsg{gen: hs.m.gen, res: res, era: client.EraLegacy})
	hs.send(toolsListedMsg{gen: hs.m.gen, tools: fixtureTools()})
	screen := hs.screen()
	for _, bad := range []string{"\x1b]0;pwned", "\x1b[2J", "\x9b"} {
		if strings.Contains(hs.m.render(), bad) {
			t.Fatalf("the server's %q reached the terminal", bad)
		}
	}
	golden.Assert(t, "instructions_connect_80x24", screen)
	lines := strings.Split(screen, "\n")
	if help := lines[len(lines)-2]; !strings.HasPrefix(help, "instructions: Use search before open.") || !strings.Contains(help, "? reads all") {
		t.Errorf("help line %q", help)
	}
	hs.press("?")
	golden.Assert(t, "instructions_help_80x24", hs.screen())
	hs.press("?")
	// Any key hides them: the usual help line is back.
	if lines := strings.Split(hs.screen(), "\n"); strings.HasPrefix(lines[len(lines)-2], "instructions:") {
		t.Errorf("still on the help line after keys: %q", lines[len(lines)-2])
	}
	// A server with none shows none.
	hs.m.instr.set("")
	hs.press("?")
	if strings.Contains(hs.screen(), "The server's instructions") {
		t.Error("the help screen has instructions the server did not send")
	}
}

// A watched session's instructions are the host's handshake's answer.
func TestWatchInstructions(t *testing.T) {
	src := newRecorded()
	hs := newWatchHarness(t, src)
	var e events
	e.call(0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude","version":"1"}}`, 0)
	e.answer(20, 0, 1, "initialize", "", `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"gh-server","version":"2.0"},"instructions":"Call search first."}`)
	src.batches <- e.take()
	hs.pump()
	if hs.m.instr.text != "Call search first." || !strings.Contains(hs.screen(), "instructions: Call search first.") {
		t.Errorf("instructions %q; screen:\n%s", hs.m.instr.text, hs.screen())
	}
}
