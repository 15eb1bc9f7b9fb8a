package replay_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/replay"
)

// FuzzOpen: any file either opens or is refused with an error; an opened
// timeline can be read end to end, planned at every position and searched
// for problems without a panic, and its times never go backwards.
func FuzzOpen(f *testing.F) {
	if b, err := os.ReadFile(sample); err == nil {
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	head := `{"type":"header","format":"sonde-capture","version":"1.0","start":"2026-01-01T00:00:00Z"}` + "\n"
	f.Add([]byte(head + `{"type":"request","seq":1,"t":5,"dir":"out","id":1,"method":"tools/call","state":"queued"}` + "\n"))
	f.Add([]byte(head + `{"type":"frame","seq":1,"t":9,"dir":"in","kind":"response","id":"x","raw":"{}"}` + "\n" + head))
	path := filepath.Join(f.TempDir(), "c.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		tl, err := replay.Open(path, 3*time.Second)
		if err != nil {
			return
		}
		defer tl.Close()
		_ = tl.Warnings()
		n := tl.Len()
		if _, err := tl.Read(0, n); err != nil {
			return // a record damaged past the index's quick look
		}
		for k := 0; k <= n; k++ {
			tl.Plan(k)
			tl.NextProblem(k)
			tl.PrevProblem(k)
			tl.ToolsAt(k)
			if k > 0 && tl.Time(k) < tl.Time(k-1) {
				t.Fatalf("time goes back at %d: %v < %v", k, tl.Time(k), tl.Time(k-1))
			}
		}
		tl.At(tl.End())
	})
}
