package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/mcpserver"
	"github.com/sonde-mcp/sonde/transport"
)

// recordingConn is a fixture session of sonde's client, recorded to the
// capture the server asked for: what the command line's opener does,
// in-process.
type recordingConn struct {
	c   *client.Client
	rec *capture.Recorder
}

func (r recordingConn) Client() *client.Client      { return r.c }
func (r recordingConn) Redactor() *capture.Redactor { return nil }
func (r recordingConn) Close()                      { r.c.Close(); r.rec.Close() }

// recordingOpener starts the command of l (the fixture), recording to
// l.Record.
func recordingOpener(ctx context.Context, l mcpserver.Launch, follow func(*client.Client)) (mcpserver.Conn, error) {
	f, err := capture.Create(l.Record, false)
	if err != nil {
		return nil, err
	}
	rec, err := capture.NewRecorder(f, capture.Options{Sonde: "test", Command: l.Argv})
	if err != nil {
		return nil, err
	}
	env, err := transport.BuildEnv(os.Environ(), nil, clitest.ChildEnv())
	if err != nil {
		return nil, err
	}
	c := client.New(client.Options{Timeout: 10 * time.Second})
	if follow != nil {
		follow(c)
	}
	rec.Follow(c)
	if err := c.Connect(client.Stdio(transport.StdioConfig{Argv: l.Argv, Env: env, KillAfter: 300 * time.Millisecond})); err != nil {
		c.Close()
		rec.Close()
		return nil, err
	}
	if _, err := c.Initialize(ctx); err != nil {
		c.Close()
		rec.Close()
		return nil, err
	}
	return recordingConn{c: c, rec: rec}, nil
}

// TestResourcesPaged: resources/list comes in pages of Options.PageSize,
// each session's capture once, in the order they started; closing the
// server removes its captures' folder.
func TestResourcesPaged(t *testing.T) {
	fx := clitest.NewFixture(t)
	argv := fx.Argv()
	srv, err := mcpserver.New(mcpserver.Options{Allow: []string{mcpserver.QuoteWords(argv)}, Open: recordingOpener, PageSize: 2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "pager", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 3 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "session_start", Arguments: map[string]any{"command": argv[0], "args": argv[1:]}})
		if err != nil || res.IsError {
			t.Fatalf("session_start: %+v %v", res, err)
		}
		ids = append(ids, res.StructuredContent.(map[string]any)["session"].(string))
	}
	var uris []string
	pages := 0
	cursor := ""
	for {
		page, err := cs.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range page.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = page.NextCursor; cursor == "" || pages > 5 {
			break
		}
	}
	if pages != 2 || len(uris) != 3 {
		t.Fatalf("%d pages: %v", pages, uris)
	}
	seen := map[string]bool{}
	for _, u := range uris {
		seen[u] = true
	}
	for _, id := range ids {
		if !seen["sonde://sessions/"+id] {
			t.Errorf("no resource for %s: %v", id, uris)
		}
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uris[0]})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/jsonl" {
		t.Fatalf("read: %+v %v", read, err)
	}
	lint, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "capture_lint", Arguments: map[string]any{"path": ids[0]}})
	if err != nil || lint.IsError {
		t.Fatalf("capture_lint %s: %+v %v", ids[0], lint, err)
	}
	path := lint.StructuredContent.(map[string]any)["capture"].(string)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the session's capture: %v", err)
	}
	cs.Close()
	<-done // the client went: Run closed every session and the resources
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("the captures' folder is left after the server closed: %v", err)
	}
}
