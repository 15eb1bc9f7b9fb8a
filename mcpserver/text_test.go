package mcpserver

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sonde-mcp/sonde/capture"
)

func TestServerText(t *testing.T) {
	red, err := capture.NewRedactor([]string{"API_KEY=sk-very-secret-value"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, cut := serverText(red, []byte("key sk-very-secret-value \x1b]52;c;aGk=\x07 \x1b[2J\nnext"), 0)
	if cut || strings.Contains(got, "sk-very-secret-value") || strings.ContainsAny(got, "\x1b\x07\n") || !strings.Contains(got, `\n`) {
		t.Errorf("serverText = %q: want the secret redacted and control characters escaped", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got, cut = serverText(nil, []byte(long), 51)
	if !cut || !utf8.ValidString(got) || !strings.HasSuffix(got, "…[cut: 51 of 200 bytes shown]") || strings.Count(got, "é") != 25 {
		t.Errorf("cut = %v, %q", cut, got)
	}
}

func TestRegistry(t *testing.T) {
	r := newRegistry(2)
	a, err := r.reserve()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.reserve()
	if _, err := r.reserve(); err == nil || !strings.Contains(err.Error(), "--max-sessions 2") {
		t.Errorf("third session: %v", err)
	}
	r.release(b)
	if _, err := r.get(a); err == nil {
		t.Error("a reserved place is not a session yet")
	}
	closed := 0
	r.put(newSession(sessionParts{ID: a, Log: newEventLog(), Close: func() { closed++ }}))
	if s, err := r.get(a); err != nil || s.id != a {
		t.Errorf("get(%s): %v", a, err)
	}
	if _, err := r.get("s99"); err == nil || !strings.Contains(err.Error(), "session_start") {
		t.Errorf("unknown session: %v", err)
	}
	r.closeAll()
	r.closeAll()
	if closed != 1 {
		t.Errorf("closed %d times, want 1", closed)
	}
	if _, err := r.reserve(); err == nil {
		t.Error("a closed registry takes new sessions")
	}
}
