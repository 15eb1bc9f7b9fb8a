package client

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/peertest"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/transport"
)

// interopModern checks a modern session with the Go SDK's server.
func interopModern(t *testing.T, s *session) {
	t.Helper()
	ctx := context.Background()
	res, err := s.c.Initialize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolVersion != mcp.ModernVersion || res.ServerInfo.Name != "everything" || s.c.Era() != EraModern {
		t.Fatalf("discover gave %s %q, era %s", res.ProtocolVersion, res.ServerInfo.Name, s.c.Era())
	}
	tools, err := s.c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "greet (structured)") {
		t.Errorf("tools %v", names)
	}
	r, raw, err := s.c.CallTool(ctx, "greet", json.RawMessage(`{"name":"sonde"}`), CallOptions{})
	if err != nil || r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "sonde") {
		t.Fatalf("greet: %s %v", raw, err)
	}
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == mcp.MethodInitialize {
			t.Error("initialize sent in a modern session")
		}
	}
}

func TestInteropGoSDKModern(t *testing.T) {
	bin := peertest.GoSDK(t)
	for _, era := range []Era{EraModern, EraAuto} {
		t.Run("stdio "+string(era), func(t *testing.T) {
			interopModern(t, startPeer(t, Options{Era: era, Timeout: 20 * time.Second}, bin))
		})
	}
	// Over HTTP the example server (no stateless option) answers
	// server/discover but lists only legacy versions: modern is
	// MCP_HANDSHAKE naming them, auto falls back to initialize.
	t.Run("http modern", func(t *testing.T) {
		s := dialSession(t, Options{Era: EraModern, Timeout: 20 * time.Second}, HTTP(transport.HTTPConfig{URL: peertest.GoSDKHTTP(t) + "/mcp"}))
		_, err := s.c.Initialize(context.Background())
		if !errors.Is(err, ErrHandshake) || !strings.Contains(err.Error(), "the server supports 2025-11-25") {
			t.Fatalf("err = %v", err)
		}
		discoverHeaders(t, s)
	})
	t.Run("http auto", func(t *testing.T) {
		s := dialSession(t, Options{Era: EraAuto, Timeout: 20 * time.Second}, HTTP(transport.HTTPConfig{URL: peertest.GoSDKHTTP(t) + "/mcp"}))
		res, err := s.c.Initialize(context.Background())
		if err != nil || s.c.Era() != EraLegacy || res.ServerInfo.Name != "everything" {
			t.Fatalf("%+v %v era %s", res, err, s.c.Era())
		}
		s.waitFor("the fallback note", func(ev Event) bool {
			return ev.Kind == EvNote && strings.Contains(ev.Note, "sonde speaks the modern era as 2026-07-28 only") && strings.Contains(ev.Note, "falling back")
		})
		discoverHeaders(t, s)
		if r, raw, err := s.c.CallTool(context.Background(), "greet", json.RawMessage(`{"name":"sonde"}`), CallOptions{}); err != nil || r.IsError {
			t.Fatalf("greet: %s %v", raw, err)
		}
	})
}

// discoverHeaders checks the headers of the server/discover POST: the
// modern version and method (the server refuses the request without them),
// no session.
func discoverHeaders(t *testing.T, s *session) {
	t.Helper()
	// Events reach the recorder after Initialize returns: wait for the
	// exchange first.
	s.waitFor("the discover POST", func(ev Event) bool {
		return ev.Kind == EvHTTP && ev.HTTP.Method == "POST" && ev.HTTP.ReqID.String() == "1"
	})
	for _, ev := range s.snapshot() {
		if ev.Kind == EvHTTP && ev.HTTP.Method == "POST" && ev.HTTP.ReqID.String() == "1" {
			h := strings.Join(ev.HTTP.Header, "\n")
			if ev.HTTP.Status != 200 || strings.Contains(h, "Mcp-Session-Id") || !strings.Contains(h, "> MCP-Protocol-Version: "+mcp.ModernVersion) || !strings.Contains(h, "> Mcp-Method: server/discover") {
				t.Errorf("discover POST %d, headers:\n%s", ev.HTTP.Status, h)
			}
			return
		}
	}
	t.Error("no discover POST")
}

func TestInteropAutoFallsBackToLegacy(t *testing.T) {
	bin := everythingServer(t)
	check := func(t *testing.T, s *session) {
		res, err := s.c.Initialize(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.c.Era() != EraLegacy || res.ProtocolVersion != mcp.LatestVersion {
			t.Fatalf("era %s, version %s", s.c.Era(), res.ProtocolVersion)
		}
		s.waitFor("the fallback note", func(ev Event) bool {
			return ev.Kind == EvNote && strings.Contains(ev.Note, "falling back to initialize")
		})
		if _, _, err := s.c.CallTool(context.Background(), "echo", json.RawMessage(`{"message":"hi"}`), CallOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		s := startPeer(t, Options{Era: EraAuto, Timeout: 20 * time.Second}, bin)
		check(t, s)
		s.waitFor("-32601 for server/discover", isFrame(VerdictRemoteError, "error for id 1"))
	})
	t.Run("http", func(t *testing.T) {
		base := peertest.EverythingHTTP(t, "streamableHttp")
		check(t, dialSession(t, Options{Era: EraAuto, Timeout: 20 * time.Second}, HTTP(transport.HTTPConfig{URL: base + "/mcp"})))
	})
}
