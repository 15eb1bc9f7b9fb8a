package capture

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A secret added after the redactor was built is replaced from then on,
// raw and JSON-escaped; short ones are not.
func TestRedactorAddSecret(t *testing.T) {
	r, err := NewRedactor(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, changed := r.Bytes([]byte(`x tok/en"1 y`)); changed {
		t.Fatalf("redacted before AddSecret: %s", b)
	}
	r.AddSecret(`tok/en"1`)
	r.AddSecret("abc")
	for _, in := range []string{`x tok/en"1 y`, `{"v":"tok/en\"1"}`} {
		if b, changed := r.Bytes([]byte(in)); !changed || bytes.Contains(b, []byte("tok/en")) {
			t.Errorf("%s → %s", in, b)
		}
	}
	if _, changed := r.Bytes([]byte("abc")); changed {
		t.Error("a 3-byte secret was redacted")
	}
	var nilR *Redactor
	nilR.AddSecret("whatever")
}

// TestRedactorEscapedSpellings: a server may spell a secret inside a JSON
// string with any escapes it likes; the redactor matches decoded values and
// leaves the rest of the line as it was.
func TestRedactorEscapedSpellings(t *testing.T) {
	r, err := NewRedactor([]string{"TOKEN=h\u00e4mmer/42"}, []string{`sk-[a-z]{6}`})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		`{"a":1,"text":"see h\u00e4mmer\/42 here","b":"\n"}`,
		`{"text":"\u0068\u00e4mmer/42"}`,
		`{"text":"h\u00E4mmer\u002f42"}`,
		`{"k":"sk-\u0061bcdef"}`,
	} {
		b, changed := r.Bytes([]byte(in))
		if !changed || !bytes.Contains(b, []byte(Redacted)) || bytes.Contains(b, []byte("mmer")) || bytes.Contains(b, []byte("bcdef")) {
			t.Errorf("%s → %s (changed %v)", in, b, changed)
		}
	}
	keep := `{"a":"x\ny","b":"\u0041"}`
	if b, changed := r.Bytes([]byte(keep)); changed || string(b) != keep {
		t.Errorf("%s → %s (changed %v)", keep, b, changed)
	}
	// The bytes around a redacted string are kept as they were.
	b, _ := r.Bytes([]byte(`{"x" : "\u00e9", "t":"h\u00e4mmer\/42"}`))
	if want := `{"x" : "\u00e9", "t":"` + Redacted + `"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

// FuzzRedactorBytes: whatever the line, redaction terminates, and a line
// that held the secret in any JSON spelling no longer decodes to it.
func FuzzRedactorBytes(f *testing.F) {
	for _, s := range []string{`{"t":"s3cr\u0065t"}`, `"\`, `"\"\\"`, `s3cret`, `{"t":"\ud800"}`} {
		f.Add([]byte(s))
	}
	r, _ := NewRedactor([]string{"K=s3cret"}, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := r.Bytes(b)
		if bytes.Contains(out, []byte("s3cret")) {
			t.Fatalf("%q → %q", b, out)
		}
		var v any
		if json.Unmarshal(out, &v) == nil {
			if s, _ := json.Marshal(v); bytes.Contains(s, []byte("s3cret")) {
				t.Fatalf("%q → %q decodes to the secret", b, out)
			}
		}
	})
}
