package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/transport"
)

// everythingServer is the TypeScript reference server, installed by
// `make peers` (interop/package.json).
func everythingServer(t *testing.T) string { return peertest.Everything(t) }

// startPeer connects to a real server and records its events. A node
// server may take a while to exit after its stdin closes on a loaded
// machine: it gets 3s before it is signalled (500ms once was not enough).
func startPeer(t *testing.T, opts Options, argv ...string) *session {
	t.Helper()
	env, _ := transport.BuildEnv(os.Environ(), nil, nil)
	return connectSession(t, opts, transport.StdioConfig{Argv: argv, Env: env, KillAfter: 3 * time.Second})
}

func TestInteropEverything(t *testing.T) {
	bin := everythingServer(t)
	t.Run("stdio", func(t *testing.T) {
		interopEverything(t, startPeer(t, Options{Timeout: 20 * time.Second}, bin))
	})
	for _, tc := range []struct {
		name, arg, path string
		mode            transport.HTTPMode
	}{
		{"streamable", "streamableHttp", "/mcp", transport.ModeStreamable},
		{"sse", "sse", "/sse", transport.ModeSSE},
		{"auto-to-sse", "sse", "/sse", transport.ModeAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := peertest.EverythingHTTP(t, tc.arg)
			s := dialSession(t, Options{Timeout: 20 * time.Second}, HTTP(transport.HTTPConfig{URL: base + tc.path, Mode: tc.mode}))
			interopEverything(t, s)
			if tc.mode == transport.ModeAuto && !s.sawHTTP(func(h *transport.HTTPEvent) bool { return strings.Contains(h.Note, "endpoint: messages go to") }) {
				t.Fatal("auto mode did not fall back to the legacy transport")
			}
		})
	}
}

func interopEverything(t *testing.T, s *session) {
	ctx := context.Background()
	res, err := s.c.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != "2025-11-25" || !strings.Contains(res.ServerInfo.Name, "everything") {
		t.Fatalf("initialize: %+v", res)
	}
	tools, err := s.c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
		if !names[want] {
			t.Fatalf("no %s among %v", want, names)
		}
	}

	t.Run("call", func(t *testing.T) {
		r, _, err := s.c.CallTool(ctx, "echo", json.RawMessage(`{"message":"hi"}`), CallOptions{})
		if err != nil || r.IsError || r.Content[0].Text != "Echo: hi" {
			t.Fatalf("%+v %v", r, err)
		}
		r, _, err = s.c.CallTool(ctx, "get-sum", json.RawMessage(`{"a":2,"b":3}`), CallOptions{})
		if err != nil || !strings.Contains(r.Content[0].Text, "5") {
			t.Fatalf("%+v %v", r, err)
		}
	})
	t.Run("every tool that needs nothing from the client", func(t *testing.T) {
		args := map[string]string{
			"echo":                           `{"message":"hi"}`,
			"get-annotated-message":          `{"messageType":"success","includeImage":true}`,
			"get-env":                        `{}`,
			"get-resource-links":             `{"count":2}`,
			"get-resource-reference":         `{"resourceType":"Blob","resourceId":2}`,
			"get-structured-content":         `{"location":"Chicago"}`,
			"get-sum":                        `{"a":2,"b":3}`,
			"get-tiny-image":                 `{}`,
			"gzip-file-as-resource":          `{"name":"hi.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resource"}`,
			"toggle-simulated-logging":       `{}`,
			"toggle-subscriber-updates":      `{}`,
			"trigger-long-running-operation": `{"duration":0.2,"steps":2}`,
		}
		// Task-augmented only (it needs params.task): TestInteropFeatures and
		// TestInteropTaskInputRequired run it.
		skip := map[string]bool{"simulate-research-query": true}
		for _, tool := range tools {
			if skip[tool.Name] {
				continue
			}
			a, ok := args[tool.Name]
			if !ok {
				t.Errorf("tool %s of the pinned peer has no test arguments here", tool.Name)
				continue
			}
			r, raw, err := s.c.CallTool(ctx, tool.Name, json.RawMessage(a), CallOptions{})
			if err != nil || r.IsError || (len(r.Content) == 0 && r.StructuredContent == nil) {
				t.Errorf("%s: %v %s", tool.Name, err, raw)
			}
			if tool.OutputSchema != nil && r != nil && r.StructuredContent == nil {
				t.Errorf("%s has an outputSchema but returned no structuredContent: %s", tool.Name, raw)
			}
		}
	})
	t.Run("ping", func(t *testing.T) {
		if err := s.c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown tool is an isError result", func(t *testing.T) {
		r, _, err := s.c.CallTool(ctx, "no-such-tool", nil, CallOptions{})
		if err != nil || !r.IsError {
			t.Fatalf("%+v %v", r, err)
		}
	})
	t.Run("unknown method is MCP_ERROR -32601", func(t *testing.T) {
		_, err := s.c.Call(ctx, "no/such/method", nil, CallOptions{})
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRemote || e.RPC.Code != -32601 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("progress", func(t *testing.T) {
		call := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":4}}`), CallOptions{ProgressToken: true})
		if _, err := call.Wait(); err != nil {
			t.Fatal(err)
		}
		s.waitUntil("progress events", func(evs []Event) bool {
			n := 0
			for _, ev := range evs {
				if ev.Kind == EvRequest && ev.Req.ID == call.ID && ev.Req.State == StateProgress {
					n++
				}
			}
			return n >= 3
		})
	})
	t.Run("out of order", func(t *testing.T) {
		slow := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":2}}`), CallOptions{})
		fast := s.c.Go(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"message":"fast"}}`), CallOptions{})
		select {
		case <-fast.Done():
		case <-slow.Done():
			t.Fatal("slow call settled first")
		}
		if raw, err := fast.Wait(); err != nil || !strings.Contains(string(raw), "Echo: fast") {
			t.Fatalf("%s %v", raw, err)
		}
		if _, err := slow.Wait(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		call := s.c.Go(cctx, "tools/call", json.RawMessage(`{"name":"trigger-long-running-operation","arguments":{"duration":5,"steps":5}}`), CallOptions{ProgressToken: true})
		s.waitFor("sent", func(ev Event) bool { return ev.Kind == EvRequest && ev.Req.ID == call.ID && ev.Req.State == StateSent })
		cancel()
		if _, err := call.Wait(); !errors.Is(err, ErrAborted) {
			t.Fatalf("got %v", err)
		}
		// The server still answers ping afterwards.
		if err := s.c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if st := s.c.Stats(); st.Malformed != 0 || st.Invalid != 0 || st.Unknown != 0 {
		t.Fatalf("protocol problems with the reference server: %+v", st)
	}
}
