package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/features"
)

// 6 focuses the Features pane, which takes the Tools rectangle; the lists
// of the current session fill it, those of an old session do not.
func TestFeaturesPane(t *testing.T) {
	hs := newHarness(t, 120, 40)
	hs.connect()
	tools := hs.m.rects[paneTools]
	hs.press("6")
	if hs.m.focus != paneFeatures || hs.m.rects[paneFeatures] != tools {
		t.Fatalf("focus %d, rects %v", hs.m.focus, hs.m.rects)
	}
	if _, ok := hs.m.rects[paneTools]; ok {
		t.Fatal("Tools still shown beside Features")
	}
	hs.send(featuresListedMsg{gen: hs.m.gen - 1, ListedMsg: features.ListedMsg{HasResources: true, Resources: []mcp.Resource{{URI: "old://x", Name: "x"}}}})
	if strings.Contains(ansi.Strip(hs.m.render()), "old://x") {
		t.Fatal("the lists of an old session were shown")
	}
	hs.send(featuresListedMsg{gen: hs.m.gen, ListedMsg: features.ListedMsg{HasResources: true, Resources: []mcp.Resource{{URI: "file:///a.txt", Name: "a"}}}})
	screen := ansi.Strip(hs.m.render())
	if !strings.Contains(screen, "─ 6 Resources 1 · Prompts 0 · Log 0 ") || !strings.Contains(screen, "› file:///a.txt") {
		t.Fatalf("%s", screen)
	}
	// A list_changed makes the root list again, once.
	ev := client.Event{Kind: client.EvFrame, Frame: &client.FrameInfo{Frame: client.Frame{Dir: client.In,
		Msg: jsonrpc.Message{Kind: jsonrpc.KindNotification, Method: mcp.MethodResourcesChanged, Params: json.RawMessage(`{}`)}}}}
	hs.feed(ev)
	if hs.m.features.WantsRefresh() {
		t.Fatal("the refresh was not taken by the root")
	}
	// A tools list_changed makes the root list the tools again.
	tc := ev
	tc.Frame = &client.FrameInfo{Frame: client.Frame{Dir: client.In, Msg: jsonrpc.Message{Kind: jsonrpc.KindNotification, Method: mcp.MethodToolsChanged}}}
	cmd := hs.m.featuresRefresh([]client.Event{tc})
	if cmd == nil {
		t.Fatal("no tools/list after a tools list_changed")
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok && len(b) == 1 {
		msg = b[0]()
	}
	if _, ok := msg.(toolsListedMsg); !ok {
		t.Fatalf("%T", msg)
	}
	if hs.m.featuresRefresh([]client.Event{ev}) != nil {
		t.Fatal("a resources list_changed already taken lists again")
	}
	hs.press("1")
	if _, ok := hs.m.rects[paneTools]; !ok || hs.m.focus != panePending {
		t.Fatal("Tools is back when Features loses the focus")
	}
}

func TestSaveNew(t *testing.T) {
	dir := t.TempDir()
	p1, err := saveNew(dir, "demo://resource/dynamic/blob/3", []byte("one"))
	if err != nil || p1 != filepath.Join(dir, "3") {
		t.Fatal(p1, err)
	}
	p2, err := saveNew(dir, "demo://resource/dynamic/blob/3", []byte("two"))
	if err != nil || p2 != filepath.Join(dir, "3-1") {
		t.Fatal(p2, err)
	}
	p3, err := saveNew(dir, "x:../../etc/pass wd", []byte("three"))
	if err != nil || p3 != filepath.Join(dir, "pass_wd") {
		t.Fatal(p3, err)
	}
	for path, want := range map[string]string{p1: "one", p2: "two", p3: "three"} {
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Errorf("%s: %q", path, b)
		}
	}
	if _, err := saveNew(filepath.Join(dir, "missing"), "x://y", nil); err == nil {
		t.Fatal("no error for a missing directory")
	}
}
