package connect

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
)

// The OAuth tokens sonde learns are redacted in every capture redactor,
// those made before and after.
func TestOAuthSecretSink(t *testing.T) {
	f, tg, learnt := &Flags{}, &Target{}, &SecretSink{}
	before, err := redactor(f, tg, learnt)
	if err != nil {
		t.Fatal(err)
	}
	learnt.add("fixture-access-abc")
	after, _ := redactor(f, tg, learnt)
	for _, r := range []*capture.Redactor{before, after} {
		if s, changed := r.String("echo fixture-access-abc back"); !changed || strings.Contains(s, "abc") {
			t.Errorf("not redacted: %s", s)
		}
	}
}
