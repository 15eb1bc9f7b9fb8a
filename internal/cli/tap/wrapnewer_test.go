package tap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/paths"
)

// TestWrapNewerHosts: sonde wrap --host NAME --all on the documented
// sample file of each newer host, put where the host reads it, wraps its
// stdio entries, and sonde unwrap --host NAME --all gives the file back
// byte for byte.
func TestWrapNewerHosts(t *testing.T) {
	samples, err := filepath.Abs(filepath.Join("..", "..", "..", "hostconfig", "testdata", "newer"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, host, sample, rel string // rel: under home (h/) or the project (p/)
	}{
		{"gemini", paths.Gemini, "gemini-settings.json", "h/.gemini/settings.json"},
		{"gemini", paths.Gemini, "gemini-settings.json", "p/.gemini/settings.json"},
		{"codex", paths.Codex, "codex-config.toml", "h/.codex/config.toml"},
		{"zed", paths.Zed, "zed-settings.json", "h/.config/zed/settings.json"},
		{"opencode", paths.Opencode, "opencode.jsonc", "p/opencode.jsonc"},
		{"lmstudio", paths.LMStudio, "lmstudio-mcp.json", "h/.lmstudio/mcp.json"},
		{"goose", paths.Goose, "goose-config.yaml", "h/.config/goose/config.yaml"},
	} {
		t.Run(tc.flag+" "+tc.rel, func(t *testing.T) {
			home, project := clitest.TempHostHome(t)
			file := filepath.Join(home, strings.TrimPrefix(tc.rel, "h/"))
			scope := paths.User
			if r, ok := strings.CutPrefix(tc.rel, "p/"); ok {
				file, scope = filepath.Join(project, r), paths.Project
			}
			orig, err := os.ReadFile(filepath.Join(samples, tc.sample))
			if err != nil {
				t.Fatal(err)
			}
			clitest.WriteTestFile(t, file, string(orig))
			r := clitest.RunSonde(t, "", "wrap", "--host", tc.flag, "--all", "--sonde", fakeSonde)
			clitest.CheckRun(t, r, 0, "")
			if !strings.Contains(r.Stdout, file+" ("+tc.host+" · "+scope.String()+")") {
				t.Errorf("wrap:\n%s", r.Stdout)
			}
			b, _ := os.ReadFile(file)
			servers, problems := hostconfig.Parse(b, file, tc.host, scope, project)
			wrapped := 0
			for _, s := range servers {
				if s.Transport == hostconfig.Stdio {
					wrapped++
					if s.Command != fakeSonde || s.Args[0] != "tap" {
						t.Errorf("%s: %q %q", s.Name, s.Command, s.Args)
					}
				}
			}
			if len(problems) > 0 || wrapped == 0 {
				t.Fatalf("wrapped file: %v\n%s", problems, b)
			}
			clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--host", tc.flag, "--all"), 0, "")
			if b, _ := os.ReadFile(file); string(b) != string(orig) {
				t.Errorf("after unwrap:\n%s\nwant:\n%s", b, orig)
			}
		})
	}
}
