package transport

import (
	"strings"
	"testing"
)

// FuzzBuildEnv: --env entries (and --pass-env names) give an environment
// a process can take (every entry NAME=VALUE, the name non-empty, no NUL
// anywhere) in which the last --env of a name wins; or an error that never
// shows the value of an entry.
func FuzzBuildEnv(f *testing.F) {
	for _, s := range [][3]string{
		{"A=1", "B=secret-value", "PATH"}, {"NOEQUALS", "", ""}, {"=secret-value", "", ""}, {"A=1", "A=2", ""},
		{"A=x\x00secret", "", ""}, {"A\x00B=v", "", ""}, {"A==b=c", "a=1", "HOME"}, {"", "", "X=Y"}, {"Path=1", "PATH=2", ""},
	} {
		f.Add(s[0], s[1], s[2], false)
		f.Add(s[0], s[1], s[2], true)
	}
	environ := []string{"PATH=/bin", "HOME=/home/ada", "SECRET=s", "=C:=C:\\x"}
	f.Fuzz(func(t *testing.T, e1, e2, pass string, windows bool) {
		goos := "linux"
		if windows {
			goos = "windows"
		}
		var extra []string
		for _, e := range []string{e1, e2} {
			if e != "" {
				extra = append(extra, e)
			}
		}
		var passes []string
		if pass != "" {
			passes = []string{pass}
		}
		env, err := buildEnv(goos, environ, passes, extra)
		if err != nil {
			for _, e := range extra {
				k, v, ok := strings.Cut(e, "=")
				if !ok {
					v = k
				}
				if len(v) >= 4 && strings.Contains(err.Error(), v) && !strings.Contains(k, v) && !strings.Contains(pass, v) {
					t.Fatalf("buildEnv(%q): %v shows a value", extra, err)
				}
			}
			return
		}
		last := map[string]string{}
		for _, e := range extra {
			k, _, _ := strings.Cut(e, "=")
			if windows {
				k = strings.ToUpper(k)
			}
			last[k] = e
		}
		seen := map[string]bool{}
		for _, kv := range env {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
				t.Fatalf("buildEnv(%q) holds %q", extra, kv)
			}
			if windows {
				k = strings.ToUpper(k)
			}
			if seen[k] {
				t.Fatalf("buildEnv(%q): %s twice in %q", extra, k, env)
			}
			seen[k] = true
			if want, ok := last[k]; ok && kv != want {
				t.Fatalf("buildEnv(%q): %q, want the last --env %q", extra, kv, want)
			}
		}
		for k := range last {
			if !seen[k] {
				t.Fatalf("buildEnv(%q): %s missing from %q", extra, k, env)
			}
		}
	})
}
