package tap_test

import (
	"strings"
	"testing"
	"time"
)

// TestFaultDelayEndsWithSession: a delay of an hour (the longest a rule
// may ask) on the answer the server wrote last does not keep the tap
// running for that hour once the host has closed its stdin and the server
// has ended: the wait ends --kill-after (2s) later, the answer is not
// written, and the recording says so. Before, the tap slept the whole
// hour.
func TestFaultDelayEndsWithSession(t *testing.T) {
	h, rec := tapFaults(t, []string{"delay:to-host,tool=echo,ms=3600000"})
	h.write(initLine)
	h.await(`"serverInfo"`, 1)
	start := time.Now()
	h.write(initialized, echoCall(2, "held", 0))
	h.stdin.Close()
	if code := h.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, h.stderr())
	}
	t.Logf("the tap ended %v after the host closed its stdin", time.Since(start).Round(time.Millisecond))
	if strings.Contains(h.stdoutText(), `"held"`) {
		t.Errorf("the delayed answer was written after the session ended:\n%s", h.stdoutText())
	}
	n := notes(t, rec)
	if !strings.Contains(n, "delayed the response to id 2 (tools/call echo) to-host by 3600000ms") || !strings.Contains(n, "fault rule 1: the session ended during its delay: not written") {
		t.Errorf("notes:\n%s", n)
	}
}
