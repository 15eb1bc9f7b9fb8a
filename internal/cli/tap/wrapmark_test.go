package tap_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/tap"
	"github.com/sonde-mcp/sonde/internal/paths"
)

// TestUnwrapAllHandTapped: in a file with one entry sonde wrap wrapped and
// one that the user pointed at sonde tap by hand, unwrap --all gives back
// the first only; the second is left as written, and sonde says how to
// unwrap it by name. wrap --all leaves both.
func TestUnwrapAllHandTapped(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	file := filepath.Join(project, "servers.json")
	orig := "{\"mcpServers\": {\n" +
		"  \"a\": {\"command\": \"npx\", \"args\": [\"-y\", \"srv\"]},\n" +
		"  \"b\": {\"command\": \"sonde\", \"args\": [\"tap\", \"--\", \"server\"]}\n}}\n"
	clitest.WriteTestFile(t, file, orig)
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", file, "--server", "a", "--sonde", fakeSonde), 0, "")
	wrapped, _ := os.ReadFile(file)
	r := clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde)
	clitest.CheckRun(t, r, 0, "")
	if b, _ := os.ReadFile(file); string(b) != string(wrapped) || !strings.Contains(r.Stdout, "Nothing to change.") {
		t.Errorf("wrap --all changed the file:\n%s\n%s", b, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "unwrap", "--config", file, "--all")
	clitest.CheckRun(t, r, 0, "")
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Errorf("after unwrap --all:\n%s\nwant:\n%s", b, orig)
	}
	want := `  server "b": launches sonde tap but has no --wrapped-by-sonde marker (written by hand, or by an older sonde): left as it is; to unwrap it: sonde unwrap --config ` + file + " --server b\n"
	if !strings.Contains(r.Stdout, `  server "a": unwrapped (line 2)`) || !strings.Contains(r.Stdout, want) {
		t.Errorf("unwrap --all:\n%s\nwant the line\n%s", r.Stdout, want)
	}
	r = clitest.RunSonde(t, "", "unwrap", "--config", file, "--server", "b")
	clitest.CheckRun(t, r, 0, "")
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), `"b": {"command": "server", "args": []}`) {
		t.Errorf("unwrap --server b:\n%s", b)
	}
}

// TestWrapDashNamesCLI: a server named "--" and one whose args hold "--"
// are wrapped so that sonde tap's own flag parser reads the label and the
// server's argv as they were, and unwrap --all gives the file back byte
// for byte.
func TestWrapDashNamesCLI(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	file := filepath.Join(project, ".vscode", "mcp.json")
	orig := "{\n  // names\n  \"servers\": {\n" +
		"    \"--\": {\"command\": \"x\", \"args\": [\"--\", \"--label\", \"y\"]},\n" +
		"    \"b\": {\"command\": \"--\", \"args\": [\"-a\", \"--\", \"z\"]},\n" +
		"    \"c\": {\"command\": \"--\"},\n  },\n}\n"
	clitest.WriteTestFile(t, file, orig)
	before, _ := hostconfig.Parse([]byte(orig), file, paths.VSCode, paths.Project, project)
	clitest.CheckRun(t, clitest.RunSonde(t, "", "wrap", "--config", file, "--all", "--sonde", fakeSonde), 0, "")
	b, _ := os.ReadFile(file)
	after, problems := hostconfig.Parse(b, file, paths.VSCode, paths.Project, project)
	if len(problems) > 0 || len(after) != len(before) {
		t.Fatalf("%v\n%s", problems, b)
	}
	for i, s := range after {
		cmd := tap.NewCmdTap(cmdutil.NewEnv(strings.NewReader(""), io.Discard, io.Discard))
		if s.Command != fakeSonde || len(s.Args) == 0 || s.Args[0] != "tap" {
			t.Fatalf("%q: %q %q", s.Name, s.Command, s.Args)
		}
		if err := cmd.ParseFlags(s.Args[1:]); err != nil {
			t.Fatalf("%q: sonde tap %q: %v", s.Name, s.Args[1:], err)
		}
		label, _ := cmd.Flags().GetString("label")
		argv := append([]string{before[i].Command}, before[i].Args...)
		if label != s.Name || cmd.ArgsLenAtDash() != 0 || !reflect.DeepEqual(cmd.Flags().Args(), argv) {
			t.Errorf("%q: sonde tap %q reads label %q, argv %q (dash at %d), want %q", s.Name, s.Args[1:], label, cmd.Flags().Args(), cmd.ArgsLenAtDash(), argv)
		}
	}
	clitest.CheckRun(t, clitest.RunSonde(t, "", "unwrap", "--config", file, "--all"), 0, "")
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Errorf("after unwrap:\n%s\nwant:\n%s", b, orig)
	}
}

// TestUnwrapByNameTapFlags: unwrap --server reads an entry's tap flags
// with the flags sonde tap really has (a value after --record and
// --fault, none after --no-record or the root's --raw), so the server's
// command is found after the "--" that ends them, not at the label "--".
func TestUnwrapByNameTapFlags(t *testing.T) {
	_, project := clitest.TempHostHome(t)
	file := filepath.Join(project, "servers.json")
	clitest.WriteTestFile(t, file, `{"mcpServers": {"a": {"command": "sonde", "args": ["tap", "--record", "/tmp/x.jsonl", "--no-record", "--raw", "--fault", "drop:to-host", "--label", "--", "--", "srv", "--", "-v"]}}}`)
	r := clitest.RunSonde(t, "", "unwrap", "--config", file, "--server", "a")
	clitest.CheckRun(t, r, 0, "")
	if b, _ := os.ReadFile(file); string(b) != `{"mcpServers": {"a": {"command": "srv", "args": ["--", "-v"]}}}` {
		t.Errorf("unwrapped:\n%s\n%s", b, r.Stdout)
	}
}

// FuzzWrappedArgvIsTap: whatever the server's name and argv, the entry
// sonde wrap writes is read by sonde tap's own flag parser as the label
// NAME and the server's argv after the "--" that ends the flags, and
// unwrap gives the file back byte for byte.
func FuzzWrappedArgvIsTap(f *testing.F) {
	f.Add("--", "x", "--", "--label")
	f.Add("-", "--", "-h", "")
	f.Add("--label=a", "--record", "--no-record", "=")
	f.Add("a b", "C:\\x.exe", "\u00e9", "<&>")
	env := cmdutil.NewEnv(strings.NewReader(""), io.Discard, io.Discard)
	f.Fuzz(func(t *testing.T, name, command, a1, a2 string) {
		if name == "" || command == "" {
			return // not an entry Parse reads
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		orig := []byte(`{"mcpServers": {` + q(name) + `: {"command": ` + q(command) + `, "args": [` + q(a1) + `, ` + q(a2) + `]}}}`)
		before, problems := hostconfig.Parse(orig, "f", paths.ClaudeDesktop, paths.User, "")
		if len(problems) > 0 || len(before) != 1 {
			return // a name or a string JSON does not keep (invalid UTF-8)
		}
		o := hostconfig.WrapOptions{Sonde: fakeSonde, All: true}
		wrapped, _, err := hostconfig.Wrap(orig, paths.ClaudeDesktop, paths.User, o)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := hostconfig.Parse(wrapped, "f", paths.ClaudeDesktop, paths.User, "")
		if len(after) != 1 || len(after[0].Args) == 0 || after[0].Args[0] != "tap" {
			t.Fatalf("wrapped: %s", wrapped)
		}
		cmd := tap.NewCmdTap(env)
		if err := cmd.ParseFlags(after[0].Args[1:]); err != nil {
			t.Fatalf("sonde tap %q: %v", after[0].Args[1:], err)
		}
		label, _ := cmd.Flags().GetString("label")
		argv := append([]string{before[0].Command}, before[0].Args...)
		if label != before[0].Name || cmd.ArgsLenAtDash() != 0 || !reflect.DeepEqual(cmd.Flags().Args(), argv) {
			t.Fatalf("sonde tap %q: label %q argv %q (dash at %d), want %q %q", after[0].Args[1:], label, cmd.Flags().Args(), cmd.ArgsLenAtDash(), before[0].Name, argv)
		}
		back, _, err := hostconfig.Unwrap(wrapped, paths.ClaudeDesktop, paths.User, o)
		if err != nil || !bytes.Equal(back, orig) {
			t.Fatalf("unwrap (%v):\n%s\nwant\n%s", err, back, orig)
		}
	})
}
