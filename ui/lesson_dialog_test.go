package ui

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/ui/answer"
	"github.com/sonde-mcp/sonde/ui/lesson"
)

// TestLessonSpaceTogglesInDialog: in the lesson, while the elicitation
// dialog is open, space does what its footer says (ticks the checkbox)
// and does not move the lesson on; once the dialog is answered, space is
// the lesson's again.
func TestLessonSpaceTogglesInDialog(t *testing.T) {
	hs := newHarness(t, 120, 40, withLesson)
	hs.connect()
	const params = `{"message":"Proceed?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","default":false}},"required":["confirm"]}}`
	hs.feed(serverReq(100, jsonrpc.Int(7), mcp.MethodElicit, params))
	if hs.dialogID() != "7" {
		t.Fatalf("open: %q", hs.dialogID())
	}
	if s := hs.screen(); !strings.Contains(s, "space toggle") {
		t.Fatalf("the footer does not name space:\n%s", s)
	}
	step := hs.m.lesson.(*lesson.Model).Step()
	hs.press("space")
	if got := hs.m.lesson.(*lesson.Model).Step(); got != step {
		t.Fatalf("space over the dialog moved the lesson from step %d to %d", step, got)
	}
	if hs.m.dlg == nil {
		t.Fatal("space closed the dialog")
	}
	d := hs.m.dlg.(*answer.Dialog)
	if cmd := hs.send(ctrl('s')); cmd == nil || hs.m.dlg != nil {
		t.Fatal("accept did not send")
	}
	if res, _ := d.Answer(); !strings.Contains(string(res), `"confirm":true`) {
		t.Fatalf("space did not tick the checkbox: answer %s", res)
	}
	hs.press("space")
	if got := hs.m.lesson.(*lesson.Model).Step(); got == step {
		t.Fatal("space after the dialog did not move the lesson on")
	}
}
