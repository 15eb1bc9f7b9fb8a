package manager

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRoute: whatever the name, a route found is a server of the manager
// and splits the name exactly; the longest server name wins.
func FuzzRoute(f *testing.F) {
	for _, s := range []string{"a/echo", "a/b/echo", "a/", "/echo", "x/y", "a//", "ab/c"} {
		f.Add(s)
	}
	m, err := New([]Spec{{Name: "a"}, {Name: "a/b"}, {Name: "ab"}}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		server, tool, err := m.Route(name)
		if err != nil {
			return
		}
		if server+"/"+tool != name || tool == "" {
			t.Fatalf("%q routed to %q / %q", name, server, tool)
		}
		if server == "a" && strings.HasPrefix(name, "a/b/") && len(name) > len("a/b/") {
			t.Fatalf("%q: the longer server a/b should win", name)
		}
	})
}

// FuzzLoadState: any bytes in the state file give a usable state (the
// damaged file is an error and an empty state), never a panic or a nil
// record.
func FuzzLoadState(f *testing.F) {
	f.Add([]byte(`{"version":1,"servers":{"a":{"hash":"h","failures":2,"quarantined":true}}}`))
	f.Add([]byte(`{"servers":{"a":null}}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"servers":{"a":{"next_try":"x"}}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, StateFile)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		recs, _ := loadState(path)
		for k, r := range recs {
			if r == nil {
				t.Fatalf("nil record %q", k)
			}
		}
	})
}

// FuzzScrub: every string value (3 bytes or more, valid UTF-8: what a
// server can receive, and so echo) of the arguments is gone from the
// scrubbed text, however it is spelt in JSON.
func FuzzScrub(f *testing.F) {
	f.Add("hunter2", "the token hunter2 failed")
	f.Add("a\"b\\c", `message "a\"b\\c"`)
	f.Add("ééé", "xéééx")
	f.Fuzz(func(t *testing.T, secret, text string) {
		args := map[string]any{"k": secret, "nested": []any{map[string]any{"v": secret}}}
		q, _ := json.Marshal(secret)
		out := scrub(text+string(q)+secret, argStrings(args))
		if len(secret) >= 3 && utf8.ValidString(secret) && !strings.Contains(Redacted, secret) && strings.Contains(out, secret) {
			t.Fatalf("secret %q left in %q", secret, out)
		}
	})
}
