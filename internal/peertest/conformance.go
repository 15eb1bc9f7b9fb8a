package peertest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// conformanceStamp is the time a result folder's name ends with
// (server-<scenario>-2026-12-01T15-05-46-204Z).
var conformanceStamp = regexp.MustCompile(`-\d{4}-\d\d-\d\dT[\d-]+Z$`)

// ConformanceResults runs the official conformance suite's server
// scenarios against the MCP endpoint url and returns, per scenario,
// whether none of its checks failed. It fails the test when the suite
// runs over 3 minutes or reports nothing.
func ConformanceResults(t testing.TB, url string) map[string]bool {
	t.Helper()
	dir := t.TempDir()
	cmd := Conformance(t, "server", "--url", url, "-o", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done: // its status is 1 when a scenario fails; the checks say which
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the conformance suite ran over 3 minutes:\n%s", out.String())
	}
	entries, _ := os.ReadDir(dir)
	results := map[string]bool{}
	for _, e := range entries {
		name := strings.TrimPrefix(e.Name(), "server-")
		if loc := conformanceStamp.FindStringIndex(name); loc != nil {
			name = name[:loc[0]]
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []struct{ Status string }
		if json.Unmarshal(b, &checks) != nil || len(checks) == 0 {
			continue
		}
		pass := true
		for _, c := range checks {
			if c.Status == "FAILURE" {
				pass = false
			}
		}
		results[name] = pass
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite reported no scenario:\n%s", out.String())
	}
	return results
}
