package live_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// TestCheckText checks the text report of a healthy server and of one that
// writes noise on stdout (which check counts but does not fail on).
func TestCheckText(t *testing.T) {
	nTools := strconv.Itoa(len(fixtureTools(t)))
	cases := []struct {
		name    string
		sub     []string
		fixture []string
		code    int
		errLine string
		lines   []string // regexps of the report lines, in order
	}{
		{
			name: "healthy",
			sub:  []string{"check"},
			lines: []string{
				`^sonde check: ok$`,
				`^  ok   start\+initialize +\S+  sonde-fixture 0\.1\.0, protocol 2025-11-25 \(legacy era\), capabilities: tools$`,
				`^  ok   tools/list +\S+  ` + nTools + ` tools$`,
				`^  ok   ping +\S+  \{\}$`,
				// initialize, notifications/initialized, tools/list, ping.
				// The client counts a frame once its write returned, which
				// can be after the answer to ping came back: 3 is possible.
				`^  wire [34] frames sent; 0 malformed, 0 invalid, 0 unknown, 0 late, 0 duplicate; 0B on stderr$`,
			},
		},
		{
			name:    "older protocol, stdout noise",
			sub:     []string{"check", "--protocol-version", "2024-11-05"},
			fixture: []string{"--fault", "stdout-noise"},
			lines: []string{
				`^sonde check: ok$`,
				`^  ok   start\+initialize +\S+  sonde-fixture 0\.1\.0, protocol 2024-11-05 \(legacy era\), capabilities: tools$`,
				`^  ok   tools/list +\S+  ` + nTools + ` tools$`,
				`^  ok   ping +\S+  \{\}$`,
				// One noise line before each of the three responses.
				`^  wire [34] frames sent; 3 malformed, 0 invalid, 0 unknown, 0 late, 0 duplicate; 0B on stderr$`,
			},
		},
		{
			name:    "failing handshake",
			sub:     []string{"check"},
			fixture: []string{"--protocol-version", "1999-01-01"},
			code:    cmdutil.ExitHandshake,
			errLine: "sonde: MCP_HANDSHAKE: initialize: sonde asked for protocol version 2025-11-25 and the server answered 1999-01-01...",
			lines: []string{
				`^sonde check: FAILED$`,
				`^  FAIL start\+initialize +\S+  \S+ fixture --pid-file \S+ --protocol-version 1999-01-01$`,
			},
		},
		{
			// The tools/list answer is longer than the line cap: that step
			// fails and ends the session, so ping fails too; the exit
			// status is the first failure's.
			name:    "failing tools/list",
			sub:     []string{"check", "--max-line-bytes", "1KiB"},
			code:    cmdutil.ExitProtocol,
			errLine: "sonde: MCP_PROTOCOL: server wrote a line over 1024 bytes (--max-line-bytes)...",
			lines: []string{
				`^sonde check: FAILED$`,
				`^  ok   start\+initialize +\S+  sonde-fixture 0\.1\.0, protocol 2025-11-25 \(legacy era\), capabilities: tools$`,
				`^  FAIL tools/list +\S+  MCP_PROTOCOL: server wrote a line over 1024 bytes \(--max-line-bytes\)`,
				`^  FAIL ping +\S+  MCP_PROTOCOL: server wrote a line over 1024 bytes \(--max-line-bytes\)`,
				`^  wire \d frames sent; 1 malformed, `,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.NewFixture(t).RunChecked("", tc.sub, tc.fixture, tc.code, tc.errLine)
			got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
			if len(got) != len(tc.lines) {
				t.Fatalf("%d report lines, want %d:\n%s", len(got), len(tc.lines), r.Stdout)
			}
			for i, re := range tc.lines {
				if !regexp.MustCompile(re).MatchString(got[i]) {
					t.Errorf("line %d = %q, want match of %s", i+1, got[i], re)
				}
			}
		})
	}
}

// checkJSON is the --json report of check.
type checkJSON struct {
	OK    bool `json:"ok"`
	Steps []struct {
		Step   string  `json:"step"`
		OK     bool    `json:"ok"`
		MS     float64 `json:"ms"`
		Detail string  `json:"detail"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"steps"`
	Wire  *string `json:"wire"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestCheckJSON checks the --json report and the exit status of passing
// and failing checks.
func TestCheckJSON(t *testing.T) {
	nTools := strconv.Itoa(len(fixtureTools(t)))
	cases := []struct {
		name      string
		sub       []string
		fixture   []string
		code      int
		ok        bool
		steps     []string
		failed    int    // how many of the last steps failed
		failCode  string // their error code
		errPrefix string
	}{
		{
			name: "healthy", sub: []string{"check", "--json"},
			code: cmdutil.ExitOK, ok: true, steps: []string{"start+initialize", "tools/list", "ping"},
		},
		{
			name: "handshake refused", sub: []string{"check", "--json"}, fixture: []string{"--protocol-version", "1999-01-01"},
			code: cmdutil.ExitHandshake, steps: []string{"start+initialize"}, failed: 1, failCode: "MCP_HANDSHAKE",
			errPrefix: "sonde: MCP_HANDSHAKE: ...",
		},
		{
			name: "no initialize response", sub: []string{"check", "--json", "--timeout", "200ms"}, fixture: []string{"--fault", "no-initialize-response"},
			code: cmdutil.ExitTimeout, steps: []string{"start+initialize"}, failed: 1, failCode: "MCP_TIMEOUT",
			errPrefix: "sonde: MCP_TIMEOUT: initialize id 1: no response within 200ms; ...",
		},
		{
			name: "strict with noise", sub: []string{"check", "--json", "--strict"}, fixture: []string{"--fault", "stdout-noise"},
			code: cmdutil.ExitProtocol, steps: []string{"start+initialize"}, failed: 1, failCode: "MCP_PROTOCOL",
			errPrefix: "sonde: MCP_PROTOCOL: --strict: ...",
		},
		{
			name: "tools/list over the line cap", sub: []string{"check", "--json", "--max-line-bytes", "1KiB"},
			code: cmdutil.ExitProtocol, steps: []string{"start+initialize", "tools/list", "ping"}, failed: 2, failCode: "MCP_PROTOCOL",
			errPrefix: "sonde: MCP_PROTOCOL: server wrote a line over 1024 bytes (--max-line-bytes)...",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := clitest.NewFixture(t).RunChecked("", tc.sub, tc.fixture, tc.code, tc.errPrefix)
			var rep checkJSON
			if strings.Count(r.Stdout, "\n") != 1 {
				t.Errorf("stdout is not one line:\n%s", r.Stdout)
			}
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("stdout is not the JSON report: %v\n%s", err, r.Stdout)
			}
			if rep.OK != tc.ok {
				t.Errorf("ok = %v, want %v", rep.OK, tc.ok)
			}
			if len(rep.Steps) != len(tc.steps) {
				t.Fatalf("%d steps, want %q:\n%s", len(rep.Steps), tc.steps, r.Stdout)
			}
			for i, st := range rep.Steps {
				wantOK := i < len(rep.Steps)-tc.failed
				if st.Step != tc.steps[i] || st.OK != wantOK || st.MS < 0 {
					t.Errorf("step %d = %+v, want %s ok=%v", i, st, tc.steps[i], wantOK)
				}
				switch {
				case wantOK && st.Error != nil:
					t.Errorf("step %s has error %+v", st.Step, st.Error)
				case !wantOK && (st.Error == nil || st.Error.Code != tc.failCode || st.Error.Message == ""):
					t.Errorf("step %s error %+v, want code %s", st.Step, st.Error, tc.failCode)
				}
			}
			// The report's own error is the first failure's.
			switch {
			case tc.ok && rep.Error != nil:
				t.Errorf("a passing check has error %+v", rep.Error)
			case !tc.ok && (rep.Error == nil || rep.Error.Code != tc.failCode || !strings.Contains(r.Stderr, rep.Error.Message)):
				t.Errorf("error %+v, want code %s and the message on stderr %q", rep.Error, tc.failCode, r.Stderr)
			}
			if tc.ok {
				if rep.Steps[0].Detail != "sonde-fixture 0.1.0, protocol 2025-11-25 (legacy era), capabilities: tools" || rep.Steps[1].Detail != nTools+" tools" {
					t.Errorf("details %q, %q", rep.Steps[0].Detail, rep.Steps[1].Detail)
				}
				if rep.Wire == nil || !regexp.MustCompile(`^[34] frames sent; 0 malformed, 0 invalid, 0 unknown, 0 late, 0 duplicate; `).MatchString(*rep.Wire) {
					t.Errorf("wire = %v", rep.Wire)
				}
			} else if started := len(rep.Steps) > 1; started != (rep.Wire != nil) {
				t.Errorf("wire %v after %d steps", rep.Wire, len(rep.Steps))
			}
		})
	}
}

// check --url against a server that wants a token: the handshake fails with
// MCP_HTTP (exit 10), an auth line says what discovery found, and --json
// has it in the error object.
func TestCheckAuth(t *testing.T) {
	t.Parallel()
	base := clitest.FixtureHTTP(t, "--fault", "http-unauthorized", "--http-auth", "no-registration")
	r := clitest.RunSonde(t, "", "check", "--url", base+"/mcp")
	if r.Code != cmdutil.ExitHTTP || !strings.HasPrefix(r.Stderr, "sonde: MCP_HTTP: initialize 1: HTTP 401: ") {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	lines := []string{
		`^sonde check: FAILED$`,
		`^  FAIL start\+initialize +\S+  ` + regexp.QuoteMeta(base) + `/mcp$`,
		`^  auth resource ` + regexp.QuoteMeta(base) + `/mcp, authorization server ` + regexp.QuoteMeta(base) + `/as \(S256 ok, no dynamic registration\), scope fixture:tools$`,
	}
	got := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("%d report lines, want %d:\n%s", len(got), len(lines), r.Stdout)
	}
	for i, re := range lines {
		if !regexp.MustCompile(re).MatchString(got[i]) {
			t.Errorf("line %d = %q, want match of %s", i+1, got[i], re)
		}
	}

	r = clitest.RunSonde(t, "", "check", "--json", "--url", base+"/mcp")
	var rep struct {
		OK    bool `json:"ok"`
		Error struct {
			Code string `json:"code"`
			Auth struct {
				Status int    `json:"status"`
				Scope  string `json:"scope"`
				PRM    struct {
					Resource string `json:"resource"`
				} `json:"prm"`
				AS struct {
					Issuer        string   `json:"issuer"`
					TokenEndpoint string   `json:"token_endpoint"`
					PKCE          []string `json:"code_challenge_methods_supported"`
				} `json:"as"`
			} `json:"auth"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != cmdutil.ExitHTTP {
		t.Fatalf("exit %d, %v:\n%s", r.Code, err, r.Stdout)
	}
	a := rep.Error.Auth
	if rep.OK || rep.Error.Code != "MCP_HTTP" || a.Status != 401 || a.Scope != "fixture:tools" || a.PRM.Resource != base+"/mcp" ||
		a.AS.Issuer != base+"/as" || a.AS.TokenEndpoint != base+"/as/token" || len(a.AS.PKCE) != 1 {
		t.Errorf("%+v", rep)
	}
	if strings.Contains(r.Stdout, `"auth"`) && strings.Count(r.Stdout, `"auth"`) != 2 { // the error, and its step's
		t.Errorf("auth %d times:\n%s", strings.Count(r.Stdout, `"auth"`), r.Stdout)
	}

	// With the token the check passes, and has no auth line.
	r = clitest.RunSonde(t, "", "check", "--url", base+"/mcp", "--header", "Authorization: Bearer sonde-test-token")
	if r.Code != 0 || strings.Contains(r.Stdout, "  auth ") {
		t.Errorf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}
