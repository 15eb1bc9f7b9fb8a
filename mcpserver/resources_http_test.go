package mcpserver_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
)

type bearerToken string

func (b bearerToken) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestAgentHTTPResources: over Streamable HTTP (sonde mcp --listen, its
// token), the Go SDK's client gets a session's capture as a resource,
// is told on its event stream while the session's calls grow it, and
// lints it by the session's id.
func TestAgentHTTPResources(t *testing.T) {
	t.Setenv("SONDE_HOME", t.TempDir())
	fx := clitest.NewFixture(t)
	argv := fx.Argv()
	args := []string{"mcp", "--listen", "127.0.0.1:0", "--allow", mcpserver.QuoteWords(argv)}
	for _, kv := range clitest.ChildEnv() {
		args = append(args, "--env", kv)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(clitest.RunBound):
			cmd.Process.Kill()
			<-done
		}
	})
	url, token := "", ""
	sc := bufio.NewScanner(stderr)
	urlRE, tokenRE := regexp.MustCompile(`(http://\S+/mcp)`), regexp.MustCompile(`^token: (\S+)$`)
	for (url == "" || token == "") && sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
		if m := tokenRE.FindStringSubmatch(sc.Text()); m != nil {
			token = m[1]
		}
	}
	if url == "" || token == "" {
		t.Fatal("sonde mcp --listen printed no URL and token")
	}
	go io.Copy(io.Discard, stderr)

	a := &agent{t: t, grew: make(chan struct{}, 1)}
	c := sdk.NewClient(&sdk.Implementation{Name: "http-agent", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			a.mu.Lock()
			a.updated = append(a.updated, req.Params.URI)
			a.mu.Unlock()
			select {
			case a.grew <- struct{}{}:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), clitest.RunBound)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerToken(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	a.cs = cs

	var start struct{ Session string }
	a.ok("session_start", map[string]any{"command": argv[0], "args": argv[1:]}, &start)
	uri := "sonde://sessions/" + start.Session
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	a.ok("session_call", map[string]any{"session": start.Session, "tool": "echo", "arguments": map[string]any{"value": "over http"}}, &struct{}{})
	select {
	case <-a.grew:
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated over HTTP")
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil || !strings.HasPrefix(read.Contents[0].Text, `{"type":"header"`) {
		t.Fatalf("resources/read: %+v %v", read, err)
	}
	var lint mcpserver.LintResult
	if a.ok("capture_lint", map[string]any{"path": start.Session}, &lint); lint.Total != 0 {
		t.Errorf("capture_lint: %+v", lint)
	}
}
