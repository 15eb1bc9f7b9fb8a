package answer

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/mcp"
)

func twoURLs() []mcp.ElicitParams {
	return []mcp.ElicitParams{
		{Mode: "url", ElicitationID: "e-1", URL: "https://auth.example/login?state=" + strings.Repeat("a1b2", 20), Message: "Sign in to your account so that the tool can read the repository."},
		{Mode: "url", ElicitationID: "e-2", URL: "https://pay.example:8443/checkout", Message: "Pay\x1b[2J the fee."},
	}
}

// TestURLRequiredView: the server, the request, each URL whole (wrapped)
// with its message (control characters shown, not sent), host and id.
func TestURLRequiredView(t *testing.T) {
	d := NewURLRequired(st(), "demo-server 1.0", "tools/call clone", twoURLs())
	d.SetSize(60, 20)
	if d.Capturing() || d.Title() != "URL required by demo-server 1.0 · tools/call clone" {
		t.Fatal(d.Title())
	}
	golden.Assert(t, "urlrequired_60x20", view(d))
}

// TestURLRequiredKeys: j/k select, c copies the selected URL, r retries,
// esc closes; Complete marks an elicitation done.
func TestURLRequiredKeys(t *testing.T) {
	els := twoURLs()
	d := NewURLRequired(st(), "demo-server 1.0", "tools/call clone", els)
	d.SetSize(60, 12)
	act, cmd := d.Update(press("c"))
	if act != None || cmd == nil || !isClipboard(cmd(), els[0].URL) {
		t.Fatalf("c: %d", act)
	}
	d.Update(press("j"))
	d.Update(press("j")) // stays on the last
	if d.Selected() != 1 {
		t.Fatalf("selected %d", d.Selected())
	}
	if _, cmd := d.Update(press("y")); cmd == nil || !isClipboard(cmd(), els[1].URL) {
		t.Fatal("y does not copy the selected URL")
	}
	// The view scrolls to the selected elicitation and says what was copied.
	v := view(d)
	if !strings.Contains(v, "▸ 2/2 waiting") || !strings.Contains(v, "https://pay.example:8443/checkout") || !strings.Contains(v, "URL 2/2 sent to the clipboard") {
		t.Fatalf("view:\n%s", v)
	}
	if d.Complete("nope") || !d.Complete("e-2") || d.Done() != 1 {
		t.Fatal("Complete")
	}
	if v := view(d); !strings.Contains(v, "2/2 ✓ done (the server sent elicitation/complete)") {
		t.Fatalf("view after complete:\n%s", v)
	}
	d.Update(press("k"))
	if d.Selected() != 0 {
		t.Fatal("k")
	}
	if act, cmd := d.Update(press("r")); act != Retry || cmd != nil {
		t.Fatalf("r: %d", act)
	}
	if act, _ := d.Update(press("esc")); act != Later {
		t.Fatalf("esc: %d", act)
	}
	if act, cmd := d.Update(press("x")); act != None || cmd != nil {
		t.Fatal("x does something")
	}
	// One URL: nothing to select.
	one := NewURLRequired(st(), "s", "tools/call t", els[:1])
	if one.Keys().ShortHelp()[2].Enabled() {
		t.Fatal("next URL enabled with one URL")
	}
}
