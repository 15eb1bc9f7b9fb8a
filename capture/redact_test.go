package capture

import (
	"bytes"
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
