package diagram_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/diagram"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// TestStepsAreTheMermaid checks Steps is the Mermaid export's content:
// one step per line after the participants, with the same label, the
// same arrow or note place, in the same order.
func TestStepsAreTheMermaid(t *testing.T) {
	for _, name := range []string{"out-of-order-late-crash.jsonl", "concurrent-calls.jsonl"} {
		path := filepath.Join("..", "testdata", "captures", name)
		h, _ := capturetest.Records(t, path)
		for _, window := range []diagram.Options{{}, {From: diagram.Bound{Set: true, IsSeq: true, Seq: 5}}} {
			window.Start = h.Start
			b := diagram.New(window)
			for _, ev := range capturetest.Events(t, path) {
				b.Add(ev)
			}
			var buf bytes.Buffer
			if err := b.Mermaid(&buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")[3:]
			steps := b.Steps()
			if len(steps) != len(lines) || len(steps) < 10 {
				t.Fatalf("%s: %d steps, %d Mermaid lines", name, len(steps), len(lines))
			}
			for i, s := range steps {
				var want string
				switch {
				case s.Note:
					want = "    Note " + map[diagram.Where]string{diagram.WhereOver: "over C,S", diagram.WhereLeft: "left of C", diagram.WhereRight: "right of S"}[s.Where] + ": "
				case s.Dir == client.Out:
					want = "    C" + map[diagram.Arrow]string{diagram.ArrowRequest: "->>", diagram.ArrowReply: "-->>", diagram.ArrowNotify: "-)", diagram.ArrowBad: "--x"}[s.Arrow] + "S: "
				default:
					want = "    S" + map[diagram.Arrow]string{diagram.ArrowRequest: "->>", diagram.ArrowReply: "-->>", diagram.ArrowNotify: "-)", diagram.ArrowBad: "--x"}[s.Arrow] + "C: "
				}
				if want += diagram.MermaidText(s.Label); lines[i] != want {
					t.Errorf("%s step %d: %q, Mermaid %q", name, i, want, lines[i])
				}
			}
		}
	}
}
