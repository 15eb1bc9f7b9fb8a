package theme

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStateStyles(t *testing.T) {
	st := New(Dark())
	for name, want := range map[string]string{
		"resolved": "ok", "timeout": "error", "malformed": "error", "late": "warn", "queued": "accent", "notification": "info",
	} {
		var exp = map[string]string{"ok": st.OK.Render("x"), "error": st.Error.Render("x"), "warn": st.Warn.Render("x"), "accent": st.Accent.Render("x"), "info": st.Info.Render("x")}[want]
		if got := st.State(name).Render("x"); got != exp {
			t.Errorf("State(%q) renders %q, want the %s style %q", name, got, want, exp)
		}
	}
}

// NoColor styles use no colour sequences at all (38;… or 48;…), only
// attributes, so NO_COLOR terminals get none.
func TestNoColorHasNoColours(t *testing.T) {
	st := New(NoColor())
	for _, s := range []string{st.Text.Render("a"), st.Error.Render("a"), st.Selected.Render("a"), st.State("late").Render("a"), st.JSONKey.Render("a"), st.FocusBorder.Render("a")} {
		if strings.Contains(s, "38;") || strings.Contains(s, "48;") {
			t.Errorf("colour in %q", s)
		}
	}
	if dark, light := New(Dark()).Accent.Render("a"), New(Light()).Accent.Render("a"); dark == light {
		t.Error("dark and light palettes render the same accent")
	}
}
