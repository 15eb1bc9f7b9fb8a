package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// FuzzArgs: --args given inline, as @FILE or as @- (stdin) is read the same
// three ways: a JSON object, sent trimmed and valid (and, for a prompt, an
// object of strings), or a usage error that says what is wanted; never a
// panic, never a non-object or invalid JSON sent.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{
		`{"value":"hi"}`, " \n{\"a\":[1,{\"b\":null}]}\t\r\n", `{}`, `null`, ` null `, `[]`, `"text"`, `1`,
		`{"a":1,"a":2}`, `{"a":1}{"b":2}`, `{"a":1} x`, `{`, `{"s":"\ud800\u0000"}`, "{\"s\":\"\xff\"}",
		"\ufeff{}", "{}\u00a0", `{"city":"Paris","n":1}`, `{"city":"Paris"}`, "@", "@-", "",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		file := filepath.Join(dir, "args.json")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if text == "" {
			if raw, err := readJSONObject(text, nil); raw != nil || err != nil {
				t.Fatalf("no --args read as %q, %v", raw, err)
			}
			return
		}
		var inline json.RawMessage
		var inErr error
		if text[0] != '@' { // inline @… names a file: never read whatever the mutator names
			inline, inErr = readJSONObject(text, nil)
		}
		fromFile, fileErr := readJSONObject("@"+file, nil)
		fromStdin, stdinErr := readJSONObject("@-", bytes.NewReader([]byte(text)))
		if !bytes.Equal(fromFile, fromStdin) || (fileErr == nil) != (stdinErr == nil) {
			t.Fatalf("%q: @FILE read %q, %v; @- read %q, %v", text, fromFile, fileErr, fromStdin, stdinErr)
		}
		if text[0] != '@' && (!bytes.Equal(inline, fromFile) || (inErr == nil) != (fileErr == nil)) {
			t.Fatalf("%q: inline read %q, %v; @FILE read %q, %v", text, inline, inErr, fromFile, fileErr)
		}
		if err := fileErr; err != nil {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) || u.Msg == "" || fromFile != nil {
				t.Fatalf("%q: %q and %#v, want a usage error", text, fromFile, err)
			}
		} else {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(fromFile, &obj); err != nil || obj == nil || !json.Valid(fromFile) {
				t.Fatalf("%q accepted as %q: not a JSON object", text, fromFile)
			}
			if c := fromFile[0]; c != '{' || fromFile[len(fromFile)-1] != '}' {
				t.Fatalf("%q accepted as %q: not trimmed", text, fromFile)
			}
		}
		m, err := readStringArgs("@-", bytes.NewReader([]byte(text)))
		var u *cmdutil.UsageError
		switch {
		case err != nil && (!errors.As(err, &u) || u.Msg == "" || m != nil):
			t.Fatalf("%q: prompt arguments %v, %#v: want a usage error", text, m, err)
		case err == nil && fileErr != nil:
			t.Fatalf("%q: prompt arguments %v, but --args refused: %v", text, m, fileErr)
		case err == nil:
			var all map[string]any
			_ = json.Unmarshal(fromFile, &all)
			if len(all) != len(m) {
				t.Fatalf("%q: prompt arguments %q from %d members", text, m, len(all))
			}
			for k, v := range all {
				if s, ok := v.(string); !ok || m[k] != s {
					t.Fatalf("%q: prompt argument %q is %v, read as %q", text, k, v, m[k])
				}
			}
		}
	})
}
