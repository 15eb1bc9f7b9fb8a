package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// scriptLineErr is how a bad script line is named.
var scriptLineErr = regexp.MustCompile(`^script line (\d+): `)

// FuzzScript: a script (sonde script's JSONL input) is either read whole,
// one line per line that is not blank or a # comment, each with a method,
// no negative time and params that are JSON, and written back as JSON it
// reads back the same; or refused with a usage error that names a line of
// the input. Nothing is half-read.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		`{"method":"tools/call","params":{"name":"echo","arguments":{"value":"hi"}},"delay_ms":0,"timeout_ms":5000,"cancel_after_ms":100}`,
		"# comment\n\n  \t\n{\"method\":\"ping\"}\r\n{\"method\":\"tools/list\",\"params\":null}",
		`{"method":""}`, `{"params":{}}`, `{"method":"x","delay_ms":-1}`, `{"method":"x","extra":1}`,
		`{"method":"x"} trailing`, `{"method":"x"}{"method":"y"}`, `{"method":"x","timeout_ms":1.5}`,
		`{"method":"x","delay_ms":9223372036854775807}`, `{"method":"\u0000\ud800"}`, `[]`, `null`, `{`,
		"{\"method\":\"x\"}\n\xff", `{"METHOD":"x"}`, `{"method":"x","method":"y"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines, err := readScript("-", strings.NewReader(text))
		if err != nil {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) {
				t.Fatalf("readScript(%q): %v is not a usage error", text, err)
			}
			m := scriptLineErr.FindStringSubmatch(u.Msg)
			if m == nil {
				t.Fatalf("readScript(%q): %q names no line", text, u.Msg)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > strings.Count(text, "\n")+1 {
				t.Fatalf("readScript(%q): line %d of %d lines", text, n, strings.Count(text, "\n")+1)
			}
			if lines != nil {
				t.Fatalf("readScript(%q): %d lines and an error", text, len(lines))
			}
			return
		}
		want := 0
		for _, l := range strings.Split(text, "\n") {
			if l := strings.TrimSpace(l); l != "" && l[0] != '#' {
				want++
			}
		}
		if len(lines) != want {
			t.Fatalf("readScript(%q): %d lines, want %d", text, len(lines), want)
		}
		var back bytes.Buffer
		for _, l := range lines {
			if l.Method == "" || l.DelayMS < 0 || l.TimeoutMS < 0 || l.CancelAfterMS < 0 || (l.Params != nil && !json.Valid(l.Params)) {
				t.Fatalf("readScript(%q): line %+v", text, l)
			}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatalf("line %+v: %v", l, err)
			}
			back.Write(b)
			back.WriteByte('\n')
		}
		again, err := readScript("-", &back)
		if err != nil || len(again) != len(lines) {
			t.Fatalf("readScript(%q) written back as %q: %d lines, %v", text, back.String(), len(again), err)
		}
		for i := range lines {
			a, _ := json.Marshal(lines[i])
			b, _ := json.Marshal(again[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("line %d of %q: %s read back as %s", i, text, a, b)
			}
		}
	})
}
