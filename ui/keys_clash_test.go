package ui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// keyContext is one place the keyboard can be: a model with a pane focused
// in one of its modes.
type keyContext struct {
	name string
	m    *Model
}

// keyContexts walks every pane in each of its modes, in a live session, a
// live session with the lesson, and a replay.
func keyContexts(t *testing.T) []keyContext {
	t.Helper()
	var out []keyContext
	type setup struct {
		name string
		do   func(hs *harness)
	}
	toolResult := func(hs *harness) {
		hs.send(tools.ResultMsg{Tool: "echo", ID: jsonrpc.Int(9), Result: &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "hi"}}}})
	}
	listed := func(hs *harness) {
		hs.send(featuresListedMsg{gen: hs.m.gen, ListedMsg: features.ListedMsg{HasResources: true, HasPrompts: true,
			Resources: []mcp.Resource{{URI: "file:///a.txt", Name: "a"}}, Prompts: []mcp.Prompt{{Name: "p"}}}})
	}
	setups := []setup{
		{"pending live", func(hs *harness) { hs.press("1") }},
		{"pending history", func(hs *harness) { hs.press("1", "h") }},
		{"frames list", func(hs *harness) { hs.press("2") }},
		{"frames detail", func(hs *harness) { hs.press("2", "enter") }},
		{"frames filtered", func(hs *harness) { hs.press("2", "/", "x", "enter") }},
		{"tools list", func(hs *harness) { hs.press("3") }},
		{"tools result", func(hs *harness) { hs.press("3"); toolResult(hs) }},
		{"stderr", func(hs *harness) { hs.press("4") }},
		{"features resources", func(hs *harness) { listed(hs); hs.press("6") }},
		{"features prompts", func(hs *harness) { listed(hs); hs.press("6", "P") }},
		{"features log", func(hs *harness) { listed(hs); hs.press("6", "L") }},
		{"timeline", func(hs *harness) { hs.press("7") }},
	}
	for _, lesson := range []bool{false, true} {
		for _, s := range setups {
			var opts []opt
			name := s.name
			if lesson {
				opts, name = []opt{withLesson}, "lesson/"+name
			}
			hs := newHarness(t, 160, 50, opts...)
			hs.play()
			s.do(hs)
			out = append(out, keyContext{name, hs.m})
		}
		if lesson {
			hs := newHarness(t, 160, 50, withLesson)
			hs.play()
			hs.press("5")
			out = append(out, keyContext{"lesson/lesson", hs.m})
		}
	}
	for i, name := range []string{"pending", "frames", "tools", "stderr", "", "", "timeline"} {
		if name == "" {
			continue
		}
		rh := newReplayHarness(t, sampleCapture, 160, 50)
		rh.send(keyMsg(fmt.Sprint(i + 1)))
		out = append(out, keyContext{"replay/" + name, rh.m})
	}
	return out
}

// enabled lists the enabled bindings of groups.
func enabled(groups ...[]key.Binding) []key.Binding {
	var out []key.Binding
	for _, g := range groups {
		for _, b := range g {
			if b.Enabled() {
				out = append(out, b)
			}
		}
	}
	return out
}

// globalBindings are the keys that apply whatever the pane, in m's state.
func globalBindings(m *Model) []key.Binding {
	var out []key.Binding
	for _, g := range m.keys.FullHelp() {
		out = append(out, enabled(g)...)
	}
	if m.rp != nil {
		for _, g := range m.rp.keys.FullHelp() {
			out = append(out, enabled(g)...)
		}
	}
	return out
}

// clashes returns "key: a / b" for each key bound twice with different
// meanings among bs.
func clashes(bs []key.Binding) []string {
	owner := map[string]string{}
	var out []string
	for _, b := range bs {
		for _, k := range b.Keys() {
			what := b.Help().Key + " " + b.Help().Desc
			if prev, ok := owner[k]; ok && prev != what {
				out = append(out, k+": "+prev+" / "+what)
				continue
			}
			owner[k] = what
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// TestNoKeyHasTwoMeanings walks every pane's keymap in each mode together
// with the keys that apply everywhere, and fails on a key with two
// meanings in one context. While a pane captures typing, only its own keys
// count (the global ones are off).
func TestNoKeyHasTwoMeanings(t *testing.T) {
	for _, c := range keyContexts(t) {
		p := c.m.panes[c.m.focus]
		if p == nil {
			t.Fatalf("%s: no pane focused", c.name)
		}
		bs := enabled(p.Keys().FullHelp()...)
		if !p.Capturing() {
			bs = append(bs, globalBindings(c.m)...)
		}
		if got := clashes(bs); len(got) > 0 {
			t.Errorf("%s (%s focused): keys with two meanings:\n  %s", c.name, p.Title(), strings.Join(got, "\n  "))
		}
	}
}

// TestClashesFindsAClash shows the check failing on a key bound twice.
func TestClashesFindsAClash(t *testing.T) {
	a := key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "record"))
	b := key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "resources"))
	if got := clashes([]key.Binding{a, b}); len(got) != 1 {
		t.Fatalf("clashes = %v, want one", got)
	}
}
