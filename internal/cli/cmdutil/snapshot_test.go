package cmdutil_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestPrintSnapshot: the evidence of an MCP_TIMEOUT, indented under the
// error line; nothing for another error.
func TestPrintSnapshot(t *testing.T) {
	at := time.Now()
	s := &client.Snapshot{Kind: client.SnapSleeping, At: at, Queued: at.Add(-time.Second), Sent: at.Add(-time.Second), Written: "written",
		Procs: []client.ProcStat{{Pid: 42, Name: "node", State: "sleeping"}}, CPUWindow: time.Second}
	var b bytes.Buffer
	cmdutil.PrintSnapshot(&b, &client.Error{Code: client.CodeTimeout, Message: "x", Snapshot: s})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 5 || lines[0] != "  snapshot: sleeping" || lines[1] != "    request   written 1s before the deadline" || !strings.HasPrefix(lines[len(lines)-1], "    process   pid 42 node sleeping") {
		t.Fatalf("printed:\n%s", b.String())
	}
	b.Reset()
	cmdutil.PrintSnapshot(&b, errors.New("other"))
	cmdutil.PrintSnapshot(&b, &client.Error{Code: client.CodeTimeout, Message: "caller"})
	if b.Len() != 0 {
		t.Fatalf("printed %q for errors without a snapshot", b.String())
	}
}
