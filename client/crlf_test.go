package client

import (
	"bytes"
	"context"
	"testing"

	"github.com/sonde-mcp/sonde/transport"
)

// TestCRLFServer runs the fixture with --crlf, as a Windows server may
// frame its output: every line ends with "\r\n". The handshake, tools/list
// and a call work; every frame decodes and settles its request; each
// frame's raw bytes keep the "\r" as it was on the wire.
func TestCRLFServer(t *testing.T) {
	s := start(t, Options{}, fixtureArgs{extra: []string{"--crlf"}})
	s.init()
	tools, err := s.c.ListTools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("tools/list: %d tools, %v", len(tools), err)
	}
	res, _, err := s.c.CallTool(context.Background(), "echo", echoArgs("crlf", 0), CallOptions{})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "crlf" {
		t.Fatalf("tools/call echo: %+v, %v", res, err)
	}
	// The events are delivered asynchronously: wait for the three frames
	// from the server (initialize, tools/list, tools/call).
	var in []*FrameInfo
	s.waitUntil("3 frames from the server", func(evs []Event) bool {
		in = in[:0]
		for _, ev := range evs {
			if ev.Kind == EvFrame && ev.Frame.Dir == transport.In {
				in = append(in, ev.Frame)
			}
		}
		return len(in) >= 3
	})
	for _, f := range in {
		if f.Err != nil || f.Verdict != VerdictResolved {
			t.Errorf("frame %q: verdict %s, err %v", f.Raw, f.Verdict, f.Err)
		}
		if !bytes.HasSuffix(f.Raw, []byte("}\r")) {
			t.Errorf("frame %q: want the raw bytes to end with the \\r of the wire", f.Raw)
		}
	}
	if len(in) != 3 {
		t.Errorf("%d frames from the server, want 3", len(in))
	}
}
