package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// fakeMode is a mode that refuses what no lists (with its reason), and
// answers each request it does with a fakeDone naming the action.
type fakeMode struct {
	no      map[action]string
	refused []string
}

type fakeDone struct{ a action }

func (f *fakeMode) Can(a action) (bool, string) {
	why, refused := f.no[a]
	return !refused, why
}

func (f *fakeMode) do(a action, _ tea.Msg) tea.Cmd { return func() tea.Msg { return fakeDone{a} } }

func (f *fakeMode) refuse(why string) { f.refused = append(f.refused, why) }

// withFake puts a fake mode behind the root of hs.
func withFake(hs *harness, no map[action]string) *fakeMode {
	f := &fakeMode{no: no}
	hs.m.mode = f
	syncKeys(&hs.m.keys, f)
	return f
}

func TestRootRoutesRequestsToTheMode(t *testing.T) {
	hs := newHarness(t, 120, 40)
	f := withFake(hs, map[action]string{actCancel: "not now"})
	for _, c := range []struct {
		msg  tea.Msg
		want action
	}{
		{tools.CallMsg{Tool: "echo"}, actCall},
		{tools.RefreshMsg{}, actListTools},
		{tools.StartMsg{Server: "a"}, actStart},
		{features.ReadMsg{URI: "file:///x"}, actRead},
		{features.GetPromptMsg{Name: "p"}, actGetPrompt},
		{features.CompleteMsg{}, actComplete},
		{pending.CancelTaskMsg{TaskID: "t"}, actCancelTask},
	} {
		cmd := hs.send(c.msg)
		if cmd == nil {
			t.Fatalf("%T: no command from the mode", c.msg)
		}
		if got := cmd(); got != (fakeDone{c.want}) {
			t.Errorf("%T: the command gave %#v, want the mode's do of action %d", c.msg, got, c.want)
		}
	}
	if cmd := hs.send(pending.CancelMsg{ID: 1}); cmd != nil {
		t.Errorf("a refused cancel returned a command (%v)", cmd())
	}
	if len(f.refused) != 1 || f.refused[0] != "not now" {
		t.Errorf("refusals %q, want the mode's reason", f.refused)
	}
}

func TestRootKeysFollowTheMode(t *testing.T) {
	hs := newHarness(t, 120, 40)
	f := withFake(hs, map[action]string{actRestart: "no server here", actRoots: "the roots are not yours"})
	if cmd := hs.press("ctrl+r"); cmd != nil {
		t.Error("a refused restart key returned a command")
	}
	if hs.starts != 0 {
		t.Error("a refused restart started a server")
	}
	if len(f.refused) != 1 || f.refused[0] != "ctrl+r: no server here" {
		t.Errorf("refusals %q, want the key and the mode's reason", f.refused)
	}
	hs.press("?")
	s := hs.screen()
	for _, want := range []string{"Not here", "ctrl+r: no server here", "O: the roots are not yours"} {
		if !strings.Contains(s, want) {
			t.Errorf("the help screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "edit roots") || strings.Contains(s, "restart server") {
		t.Error("the help screen offers a key the mode refuses")
	}
}

func TestRefusedKeySaysWhyInTheStatusBar(t *testing.T) {
	cases := []struct {
		name string
		hs   func(t *testing.T) *harness
		key  string
		want string
	}{
		{"live S", func(t *testing.T) *harness { return newHarness(t, 160, 40) }, "S", "S: only with several servers (sonde --all)"},
		{"live F", func(t *testing.T) *harness { return newHarness(t, 160, 40) }, "F", "F: fault rules are a watched tap's (sonde watch)"},
		{"watch ctrl+r", func(t *testing.T) *harness { return newWatchHarness(t, newRecorded()) }, "ctrl+r", "ctrl+r: the host starts and stops its server"},
		{"watch R", func(t *testing.T) *harness { return newWatchHarness(t, newRecorded()) }, "R", "R: the tap records this session already"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs := c.hs(t)
			if strings.Contains(hs.status(), c.want) {
				t.Fatalf("the reason is there before the key: %q", hs.status())
			}
			hs.press(c.key)
			if !strings.Contains(hs.status(), c.want) {
				t.Errorf("status %q lacks %q", hs.status(), c.want)
			}
			if !strings.Contains(hs.screen(), c.want) {
				t.Errorf("the screen lacks %q", c.want)
			}
		})
	}
}

func TestModesCan(t *testing.T) {
	requests := []action{actCancel, actCancelTask, actAnswer, actCall, actListTools, actListFeatures, actRead, actGetPrompt, actSubscribe, actSetLevel, actComplete}
	rh := newReplayHarness(t, sampleCapture, 120, 40)
	for _, a := range requests {
		if ok, why := rh.m.mode.Can(a); ok || why != replayReadOnly {
			t.Errorf("replay Can(%d) = %v %q, want refused as read-only", a, ok, why)
		}
	}
	hs := newHarness(t, 120, 40)
	for _, a := range requests {
		if ok, why := hs.m.mode.Can(a); !ok {
			t.Errorf("live Can(%d) refused: %q", a, why)
		}
	}
	wh := newWatchHarness(t, newRecorded())
	for a, want := range map[action]bool{actCall: true, actAnswer: true, actCancel: false, actSubscribe: false, actRestart: false} {
		if ok, why := wh.m.mode.Can(a); ok != want || !ok && why == "" {
			t.Errorf("watch Can(%d) = %v %q, want %v with a reason when refused", a, ok, why, want)
		}
	}
}
