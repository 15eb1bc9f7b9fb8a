package capture

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/client"
)

// TestEachEvent: EachEvent gives the header, each event with its line,
// and the warnings of a cut file; a directory, a missing file and a
// damaged record are errors callers can tell apart.
func TestEachEvent(t *testing.T) {
	dir := t.TempDir()
	data := encodeEvents(t, nil,
		frameEvent(1, client.Out, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), client.VerdictSent),
		frameEvent(2, client.In, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), client.VerdictResolved),
	)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, append(bytes.Join(lines[:2], nil), lines[2][:len(lines[2])/2]...), 0o600); err != nil {
		t.Fatal(err)
	}
	var began bool
	var at []int
	h, warnings, err := EachEvent(cut, func(Header) { began = true }, func(ev client.Event, line int) { at = append(at, line) })
	if err != nil || !began || h.Type != TypeHeader || len(at) != 1 || at[0] != 2 || len(warnings) != 1 {
		t.Fatalf("cut file: header %v, lines %v, warnings %q, err %v", began, at, warnings, err)
	}
	if _, _, err := EachEvent(dir, nil, nil); !errors.Is(err, ErrIsDir) {
		t.Errorf("a directory: %v, want ErrIsDir", err)
	}
	var pe *fs.PathError
	if _, _, err := EachEvent(filepath.Join(dir, "none.jsonl"), nil, nil); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want a *fs.PathError", err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	damaged := append(append(bytes.Join(lines[:1], nil), "{not json\n"...), bytes.Join(lines[1:], nil)...)
	if err := os.WriteFile(bad, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	var fe *FormatError
	if _, _, err := EachEvent(bad, nil, func(client.Event, int) {}); !errors.As(err, &fe) || fe.Line != 2 {
		t.Errorf("a damaged record: %v, want a *FormatError at line 2", err)
	}
}
