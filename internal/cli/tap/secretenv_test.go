package tap

import (
	"slices"
	"testing"
)

// TestSecretEnv: the host's variables named as secrets are redacted in a
// tapped session's recording; PATH and the like are not.
func TestSecretEnv(t *testing.T) {
	env := []string{"GITHUB_PERSONAL_ACCESS_TOKEN=ghp_x", "OPENAI_API_KEY=sk-1", "PATH=/usr/bin", "HOME=/h",
		"DB_PASSWORD=p", "MY_PAT=pat", "PATHEXT=.exe", "KEYBOARD=us", "AWS_SECRET_ACCESS_KEY=a", "broken"}
	got := secretEnv(env)
	want := []string{"GITHUB_PERSONAL_ACCESS_TOKEN=ghp_x", "OPENAI_API_KEY=sk-1", "DB_PASSWORD=p", "MY_PAT=pat", "AWS_SECRET_ACCESS_KEY=a"}
	if !slices.Equal(got, want) {
		t.Errorf("secretEnv = %q, want %q", got, want)
	}
}
