package hostconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzClaudeApprovals: whatever Claude Code's three settings files hold,
// ReadClaudeApprovals does not panic, uses a file or reports it as a
// problem naming it (never both), and its approvals are those of the
// files it used, merged as Claude Code merges them: a name a used file
// rejects is disabled, never enabled; a name a used file approves is
// enabled; any other name is enabled exactly when the last used file that
// sets enableAllProjectMcpServers sets it true.
func FuzzClaudeApprovals(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "approvals", "*", ".claude", "*.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, []byte(`{"enabledMcpjsonServers": ["a"]}`), []byte{})
			f.Add([]byte{}, b, []byte(`{"disabledMcpjsonServers": ["a"], "enableAllProjectMcpServers": true}`))
		}
	}
	f.Add([]byte(`{"enableAllProjectMcpServers": true}`), []byte(`{"enableAllProjectMcpServers": null}`), []byte(`{"enableAllProjectMcpServers": false, "enabledMcpjsonServers": ["x"]}`))
	f.Add([]byte(`{"disabledMcpjsonServers": ["a"], "disabledMcpjsonServers": []}`), []byte(`{"enabledMcpjsonServers": ["a", "a", ""]}`), []byte("\xef\xbb\xbf{}"))
	f.Add([]byte(`{"enabledMcpjsonServers": "a"}`), []byte(`[]`), []byte(`{"enableAllProjectMcpServers": "true"}`))
	f.Add([]byte(`{not json`), []byte(" \n"), []byte(`{"enabledMcpjsonServers": ["\u0000", "é"], "x": {"enabledMcpjsonServers": ["b"]}}`))
	dir := f.TempDir()
	files := []string{filepath.Join(dir, "user.json"), filepath.Join(dir, "shared.json"), filepath.Join(dir, "local.json")}
	f.Fuzz(func(t *testing.T, user, shared, local []byte) {
		for i, b := range [][]byte{user, shared, local} {
			if err := os.WriteFile(files[i], b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		a, problems := ReadClaudeApprovals(files)
		bad := map[string]bool{}
		for _, p := range problems {
			if !slices.Contains(files, p.File) || p.Err == nil || bad[p.File] {
				t.Fatalf("problem %+v", p)
			}
			bad[p.File] = true
		}
		enabled, disabled := map[string]bool{}, map[string]bool{}
		all := false
		for _, file := range a.Files {
			if bad[file] || !slices.Contains(files, file) {
				t.Fatalf("file %s used and a problem (%v), or not given", file, bad[file])
			}
			b, _ := os.ReadFile(file)
			var top map[string]json.RawMessage
			if err := json.Unmarshal(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), &top); err != nil {
				t.Fatalf("used %s, which is not a JSON object: %v", file, err)
			}
			var en, dis []string
			if json.Unmarshal(orNull(top[keyEnabled]), &en) != nil || json.Unmarshal(orNull(top[keyDisabled]), &dis) != nil {
				t.Fatalf("used %s, whose lists are not arrays of strings", file)
			}
			for _, n := range en {
				enabled[n] = true
			}
			for _, n := range dis {
				disabled[n] = true
			}
			if raw := orNull(top[keyEnableAll]); string(raw) != "null" {
				if json.Unmarshal(raw, &all) != nil {
					t.Fatalf("used %s, whose %s is %s", file, keyEnableAll, raw)
				}
			}
		}
		for i, b := range [][]byte{user, shared, local} {
			used := slices.Contains(a.Files, files[i])
			if !used && !bad[files[i]] && len(bytes.TrimSpace(b)) > 0 {
				t.Fatalf("%s neither used nor a problem: %q", files[i], b)
			}
		}
		for n := range disabled {
			if got := a.Of(n); got != ApprovalDisabled {
				t.Fatalf("%q is rejected by a used file, but %s", n, got)
			}
		}
		for n := range enabled {
			if got := a.Of(n); !disabled[n] && got != ApprovalEnabled {
				t.Fatalf("%q is approved by a used file, but %s", n, got)
			}
		}
		const never = "\x00 a name no file lists"
		if got, want := a.Of(never), map[bool]Approval{true: ApprovalEnabled, false: ApprovalPending}[all]; !enabled[never] && !disabled[never] && got != want {
			t.Fatalf("an unlisted name is %s, want %s (enableAll %v)", got, want, all)
		}
	})
}

// orNull is raw, or null when the key is absent.
func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}
