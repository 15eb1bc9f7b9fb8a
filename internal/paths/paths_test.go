package paths

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a fixed environment for For.
func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestForEachOS(t *testing.T) {
	tests := []struct {
		name, goos, home string
		env              map[string]string
		want             Paths
	}{
		{
			name: "linux defaults", goos: "linux", home: "/home/ada",
			want: Paths{
				Captures: "/home/ada/.local/share/sonde/captures",
				Logs:     "/home/ada/.local/state/sonde/logs",
				Sessions: "/home/ada/.local/state/sonde/sessions",
				State:    "/home/ada/.local/state/sonde/state",
				Hosts: []HostConfig{
					{ClaudeDesktop, User, "/home/ada/.config/Claude/claude_desktop_config.json"},
					{ClaudeCode, User, "/home/ada/.claude.json"},
					{ClaudeCode, Project, ".mcp.json"},
					{Cursor, User, "/home/ada/.cursor/mcp.json"},
					{Cursor, Project, ".cursor/mcp.json"},
					{VSCode, User, "/home/ada/.config/Code/User/mcp.json"},
					{VSCode, Project, ".vscode/mcp.json"},
					{Windsurf, User, "/home/ada/.codeium/windsurf/mcp_config.json"},
					{Cline, User, "/home/ada/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
				},
			},
		},
		{
			name: "linux XDG", goos: "linux", home: "/home/ada/",
			env: map[string]string{"XDG_DATA_HOME": "/data", "XDG_STATE_HOME": "/state/", "XDG_CONFIG_HOME": "/cfg"},
			want: Paths{
				Captures: "/data/sonde/captures",
				Logs:     "/state/sonde/logs",
				Sessions: "/state/sonde/sessions",
				State:    "/state/sonde/state",
				Hosts: []HostConfig{
					{ClaudeDesktop, User, "/cfg/Claude/claude_desktop_config.json"},
					{ClaudeCode, User, "/home/ada/.claude.json"},
					{ClaudeCode, Project, ".mcp.json"},
					{Cursor, User, "/home/ada/.cursor/mcp.json"},
					{Cursor, Project, ".cursor/mcp.json"},
					{VSCode, User, "/cfg/Code/User/mcp.json"},
					{VSCode, Project, ".vscode/mcp.json"},
					{Windsurf, User, "/home/ada/.codeium/windsurf/mcp_config.json"},
					{Cline, User, "/cfg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
				},
			},
		},
		{
			// macOS apps do not follow XDG: the variables change nothing.
			name: "darwin", goos: "darwin", home: "/Users/ada",
			env: map[string]string{"XDG_DATA_HOME": "/data", "XDG_CONFIG_HOME": "/cfg", "APPDATA": `C:\x`},
			want: Paths{
				Captures: "/Users/ada/Library/Application Support/sonde/captures",
				Logs:     "/Users/ada/Library/Logs/sonde",
				Sessions: "/Users/ada/Library/Application Support/sonde/sessions",
				State:    "/Users/ada/Library/Application Support/sonde/state",
				Hosts: []HostConfig{
					{ClaudeDesktop, User, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json"},
					{ClaudeCode, User, "/Users/ada/.claude.json"},
					{ClaudeCode, Project, ".mcp.json"},
					{Cursor, User, "/Users/ada/.cursor/mcp.json"},
					{Cursor, Project, ".cursor/mcp.json"},
					{VSCode, User, "/Users/ada/Library/Application Support/Code/User/mcp.json"},
					{VSCode, Project, ".vscode/mcp.json"},
					{Windsurf, User, "/Users/ada/.codeium/windsurf/mcp_config.json"},
					{Cline, User, "/Users/ada/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"},
				},
			},
		},
		{
			name: "windows", goos: "windows", home: `C:\Users\ada`,
			env: map[string]string{"APPDATA": `D:\Roam`, "LOCALAPPDATA": `D:\Local\`, "XDG_DATA_HOME": "/data"},
			want: Paths{
				Captures: `D:\Local\sonde\captures`,
				Logs:     `D:\Local\sonde\logs`,
				Sessions: `D:\Local\sonde\sessions`,
				State:    `D:\Local\sonde\state`,
				Hosts: []HostConfig{
					{ClaudeDesktop, User, `D:\Roam\Claude\claude_desktop_config.json`},
					{ClaudeCode, User, `C:\Users\ada\.claude.json`},
					{ClaudeCode, Project, `.mcp.json`},
					{Cursor, User, `C:\Users\ada\.cursor\mcp.json`},
					{Cursor, Project, `.cursor\mcp.json`},
					{VSCode, User, `D:\Roam\Code\User\mcp.json`},
					{VSCode, Project, `.vscode\mcp.json`},
					{Windsurf, User, `C:\Users\ada\.codeium\windsurf\mcp_config.json`},
					{Cline, User, `D:\Roam\Code\User\globalStorage\saoudrizwan.claude-dev\settings\cline_mcp_settings.json`},
				},
			},
		},
		{
			// Without APPDATA and LOCALAPPDATA, their usual places under the
			// home folder.
			name: "windows defaults", goos: "windows", home: `C:\Users\ada`,
			want: Paths{
				Captures: `C:\Users\ada\AppData\Local\sonde\captures`,
				Logs:     `C:\Users\ada\AppData\Local\sonde\logs`,
				Sessions: `C:\Users\ada\AppData\Local\sonde\sessions`,
				State:    `C:\Users\ada\AppData\Local\sonde\state`,
				Hosts: []HostConfig{
					{ClaudeDesktop, User, `C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`},
					{ClaudeCode, User, `C:\Users\ada\.claude.json`},
					{ClaudeCode, Project, `.mcp.json`},
					{Cursor, User, `C:\Users\ada\.cursor\mcp.json`},
					{Cursor, Project, `.cursor\mcp.json`},
					{VSCode, User, `C:\Users\ada\AppData\Roaming\Code\User\mcp.json`},
					{VSCode, Project, `.vscode\mcp.json`},
					{Windsurf, User, `C:\Users\ada\.codeium\windsurf\mcp_config.json`},
					{Cline, User, `C:\Users\ada\AppData\Roaming\Code\User\globalStorage\saoudrizwan.claude-dev\settings\cline_mcp_settings.json`},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := For(tc.goos, tc.home, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if got.Captures != tc.want.Captures || got.Logs != tc.want.Logs || got.Sessions != tc.want.Sessions {
				t.Errorf("captures %q, logs %q, sessions %q; want %q, %q, %q", got.Captures, got.Logs, got.Sessions, tc.want.Captures, tc.want.Logs, tc.want.Sessions)
			}
			got.Hosts = got.Hosts[:min(len(got.Hosts), len(tc.want.Hosts))] // the newer hosts: TestNewerHosts
			if !reflect.DeepEqual(got.Hosts, tc.want.Hosts) {
				for i := range max(len(got.Hosts), len(tc.want.Hosts)) {
					var g, w HostConfig
					if i < len(got.Hosts) {
						g = got.Hosts[i]
					}
					if i < len(tc.want.Hosts) {
						w = tc.want.Hosts[i]
					}
					if g != w {
						t.Errorf("host %d: got %+v, want %+v", i, g, w)
					}
				}
			}
		})
	}
}

// TestRelativeOrEmptyVariablesAreIgnored: a variable that is empty or holds
// a relative path is not used (the XDG spec asks for this).
func TestRelativeOrEmptyVariablesAreIgnored(t *testing.T) {
	linux, _ := For("linux", "/home/ada", env(nil))
	for _, v := range []string{"", "data", "./data", "~/data"} {
		got, err := For("linux", "/home/ada", env(map[string]string{"XDG_DATA_HOME": v, "XDG_STATE_HOME": v, "XDG_CONFIG_HOME": v}))
		if err != nil || !reflect.DeepEqual(got, linux) {
			t.Errorf("XDG_*=%q: %+v, %v; want the defaults", v, got, err)
		}
	}
	win, _ := For("windows", `C:\Users\ada`, env(nil))
	for _, v := range []string{"", `Roaming`, `\Roaming`, `C:Roaming`, "/x"} {
		got, err := For("windows", `C:\Users\ada`, env(map[string]string{"APPDATA": v, "LOCALAPPDATA": v}))
		if err != nil || !reflect.DeepEqual(got, win) {
			t.Errorf("APPDATA=%q: %+v, %v; want the defaults", v, got, err)
		}
	}
}

func TestWindowsHomes(t *testing.T) {
	for home, want := range map[string]string{
		`\\srv\users\ada`: `\\srv\users\ada\.claude.json`,
		`C:\`:             `C:\.claude.json`,
		`c:/Users/ada/`:   `c:\Users\ada\.claude.json`,
		`//srv/users/ada`: `\\srv\users\ada\.claude.json`,
	} {
		p, err := For("windows", home, env(nil))
		if err != nil {
			t.Errorf("home %q: %v", home, err)
		} else if p.Hosts[1].Path != want {
			t.Errorf("home %q: %q, want %q", home, p.Hosts[1].Path, want)
		}
	}
}

func TestNoHome(t *testing.T) {
	for _, tc := range []struct{ goos, home string }{
		{"linux", ""}, {"linux", "home/ada"}, {"darwin", "~"},
		{"windows", ""}, {"windows", `Users\ada`}, {"windows", "/home/ada"}, {"windows", "C:"},
	} {
		if _, err := For(tc.goos, tc.home, env(nil)); !errors.Is(err, ErrNoHome) {
			t.Errorf("For(%q, %q): %v, want ErrNoHome", tc.goos, tc.home, err)
		}
	}
}

// TestCurrent: the running process gets For of its own OS, with absolute
// paths in its own syntax.
func TestCurrent(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("no home folder here: %v", err)
	}
	got, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := For(runtime.GOOS, home, os.Getenv)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Current() = %+v, want %+v", got, want)
	}
	for _, p := range []string{got.Captures, got.Logs} {
		if !filepath.IsAbs(p) {
			t.Errorf("%q is not absolute", p)
		}
	}
	for _, h := range got.Hosts {
		if filepath.IsAbs(h.Path) != (h.Scope == User) {
			t.Errorf("%s %s file %q: absolute %v", h.Host, h.Scope, h.Path, filepath.IsAbs(h.Path))
		}
	}
}

func TestScopeString(t *testing.T) {
	if User.String() != "user" || Project.String() != "project" || Scope(0).String() != "?" {
		t.Errorf("%s %s %s", User, Project, Scope(0))
	}
}

// TestSondeHomeSessions: SONDE_HOME (absolute) holds the sessions, the
// baselines and the state on every OS; a relative one is ignored, and they
// are then beside the sessions.
func TestSondeHomeSessions(t *testing.T) {
	for _, tc := range []struct{ goos, home, sondeHome, want, baselines string }{
		{"linux", "/home/ada", "/srv/sonde", "/srv/sonde/sessions", "/srv/sonde/baselines"},
		{"darwin", "/Users/ada", "/srv/sonde/", "/srv/sonde/sessions", "/srv/sonde/baselines"},
		{"windows", `C:\Users\ada`, `D:\sonde`, `D:\sonde\sessions`, `D:\sonde\baselines`},
		{"linux", "/home/ada", "rel", "/home/ada/.local/state/sonde/sessions", "/home/ada/.local/state/sonde/baselines"},
		{"darwin", "/Users/ada", "", "/Users/ada/Library/Application Support/sonde/sessions", "/Users/ada/Library/Application Support/sonde/baselines"},
		{"windows", `C:\Users\ada`, "", `C:\Users\ada\AppData\Local\sonde\sessions`, `C:\Users\ada\AppData\Local\sonde\baselines`},
	} {
		got, err := For(tc.goos, tc.home, env(map[string]string{"SONDE_HOME": tc.sondeHome}))
		if err != nil {
			t.Fatal(err)
		}
		if got.Sessions != tc.want || got.Baselines != tc.baselines {
			t.Errorf("%s, SONDE_HOME=%q: sessions %q, baselines %q; want %q, %q", tc.goos, tc.sondeHome, got.Sessions, got.Baselines, tc.want, tc.baselines)
		}
		if want := tc.want[:len(tc.want)-len("sessions")] + "state"; got.State != want {
			t.Errorf("%s, SONDE_HOME=%q: state %q, want %q", tc.goos, tc.sondeHome, got.State, want)
		}
	}
}

// TestNewerHosts: the files of Gemini CLI, Codex, Zed, opencode, Goose and
// LM Studio on each OS, after the older hosts.
func TestNewerHosts(t *testing.T) {
	tests := []struct {
		goos, home string
		env        map[string]string
		want       []HostConfig
	}{
		{"linux", "/home/ada", map[string]string{"XDG_CONFIG_HOME": "/cfg", "CODEX_HOME": "/codex"}, []HostConfig{
			{Gemini, User, "/home/ada/.gemini/settings.json"},
			{Gemini, Project, ".gemini/settings.json"},
			{Codex, User, "/codex/config.toml"},
			{Codex, Project, ".codex/config.toml"},
			{Zed, User, "/cfg/zed/settings.json"},
			{Zed, Project, ".zed/settings.json"},
			{Opencode, User, "/cfg/opencode/opencode.json"},
			{Opencode, User, "/cfg/opencode/opencode.jsonc"},
			{Opencode, Project, "opencode.json"},
			{Opencode, Project, "opencode.jsonc"},
			{Opencode, Project, ".opencode/opencode.json"},
			{Opencode, Project, ".opencode/opencode.jsonc"},
			{Goose, User, "/cfg/goose/config.yaml"},
			{LMStudio, User, "/home/ada/.lmstudio/mcp.json"},
		}},
		{"darwin", "/Users/ada", nil, []HostConfig{
			{Gemini, User, "/Users/ada/.gemini/settings.json"},
			{Gemini, Project, ".gemini/settings.json"},
			{Codex, User, "/Users/ada/.codex/config.toml"},
			{Codex, Project, ".codex/config.toml"},
			{Zed, User, "/Users/ada/.config/zed/settings.json"},
			{Zed, Project, ".zed/settings.json"},
			{Opencode, User, "/Users/ada/.config/opencode/opencode.json"},
			{Opencode, User, "/Users/ada/.config/opencode/opencode.jsonc"},
			{Opencode, Project, "opencode.json"},
			{Opencode, Project, "opencode.jsonc"},
			{Opencode, Project, ".opencode/opencode.json"},
			{Opencode, Project, ".opencode/opencode.jsonc"},
			{Goose, User, "/Users/ada/.config/goose/config.yaml"},
			{LMStudio, User, "/Users/ada/.lmstudio/mcp.json"},
		}},
		{"windows", `C:\Users\ada`, map[string]string{"APPDATA": `D:\Roam`}, []HostConfig{
			{Gemini, User, `C:\Users\ada\.gemini\settings.json`},
			{Gemini, Project, `.gemini\settings.json`},
			{Codex, User, `C:\Users\ada\.codex\config.toml`},
			{Codex, Project, `.codex\config.toml`},
			{Zed, User, `D:\Roam\Zed\settings.json`},
			{Zed, Project, `.zed\settings.json`},
			{Opencode, User, `C:\Users\ada\.config\opencode\opencode.json`},
			{Opencode, User, `C:\Users\ada\.config\opencode\opencode.jsonc`},
			{Opencode, Project, "opencode.json"},
			{Opencode, Project, "opencode.jsonc"},
			{Opencode, Project, `.opencode\opencode.json`},
			{Opencode, Project, `.opencode\opencode.jsonc`},
			{Goose, User, `D:\Roam\Block\goose\config\config.yaml`},
			{LMStudio, User, `C:\Users\ada\.lmstudio\mcp.json`},
		}},
	}
	for _, tc := range tests {
		got, err := For(tc.goos, tc.home, env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hosts) != 9+len(tc.want) {
			t.Fatalf("%s: %d host files, want %d", tc.goos, len(got.Hosts), 9+len(tc.want))
		}
		for i, w := range tc.want {
			if g := got.Hosts[9+i]; g != w {
				t.Errorf("%s: host %d: got %+v, want %+v", tc.goos, 9+i, g, w)
			}
		}
	}
}
