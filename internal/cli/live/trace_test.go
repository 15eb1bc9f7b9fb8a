package live_test

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestTraceRedactsSecrets: --trace prints what the server sends and how it
// was started; an --env value is replaced there as in a capture, in the
// server's command line and when the server echoes it back spelt with JSON
// escapes (here as a JSON-RPC error message).
func TestTraceRedactsSecrets(t *testing.T) {
	const secret = "s3cret-value-42"
	f := clitest.NewFixture(t)
	sub := []string{"call", "fail", "--trace", "--env", "API_KEY=" + secret, "--args", `{"message":"s3cret-valu\u0065-42"}`}
	r := clitest.RunSonde(t, "", f.Cmd(sub, "--echo-prefix", secret)...)
	if r.Code != 3 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var trace []string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if !strings.HasPrefix(l, "sonde: ") {
			trace = append(trace, l)
		}
	}
	text := strings.Join(trace, "\n")
	if strings.Contains(text, secret) || strings.Count(text, capture.Redacted) < 2 {
		t.Errorf("--trace printed:\n%s", text)
	}
}
