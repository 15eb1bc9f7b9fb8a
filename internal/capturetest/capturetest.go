// Package capturetest records real sessions against the fixture server to
// capture files, for the tests of the packages that read captures (lint,
// stats, diagram), and starts the fixture for any test that needs a real
// session (Stdio). The fixture is the test binary itself, re-executed: a
// package using Record or Stdio must call Main from its TestMain.
package capturetest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/fixtures"
	"github.com/sonde-mcp/sonde/internal/fixturetest"
	"github.com/sonde-mcp/sonde/transport"
)

// Main is the body of TestMain: it runs the fixture when the test binary
// was started as one, and otherwise the tests, checking for leaked
// goroutines.
func Main(m *testing.M) { fixturetest.Main(m, fixtures.Main) }

// Options shape a recorded session.
type Options struct {
	// Fixture are the fixture's arguments (faults and their settings).
	Fixture []string
	// Timeout is the client's default request timeout (5s if 0).
	Timeout time.Duration
	// HTTP serves the fixture over Streamable HTTP in-process instead of
	// running it on stdio.
	HTTP bool
	// SSE, with HTTP, speaks the legacy HTTP+SSE transport (the fixture's
	// /sse and /message) instead of Streamable HTTP.
	SSE bool
	// Path is where the capture goes, replacing what is there (default: a
	// file in a temporary folder of the test).
	Path string
	// Era is the client's protocol era (client.EraLegacy if empty); the
	// fixture's --era is the caller's to pass in Fixture.
	Era client.Era
	// ServerRequests and Inputs are what the client declares and how it
	// answers (elicitation, for an MRTR chain against the fixture's
	// confirm tool in the modern era).
	ServerRequests client.ServerRequests
	Inputs         client.InputFunc
}

// Record runs a session against the fixture while recording it, and
// returns the capture's path. run drives the client (Initialize is not
// called for it); the client is closed after run returns.
func Record(t testing.TB, o Options, run func(ctx context.Context, c *client.Client)) string {
	t.Helper()
	dir := t.TempDir()
	path := o.Path
	if path == "" {
		path = filepath.Join(dir, "session.jsonl")
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	var dial client.Dialer
	var argv []string
	if o.HTTP {
		url, mode := fixturetest.ServeHTTP(t, o.Fixture...)+"/mcp", transport.ModeStreamable
		if o.SSE {
			url, mode = strings.TrimSuffix(url, "/mcp")+"/sse", transport.ModeSSE
		}
		argv = []string{url}
		dial = client.HTTP(transport.HTTPConfig{URL: url, Mode: mode, ConnectTimeout: 5 * time.Second})
	} else {
		cfg := Stdio(t, o.Fixture...)
		argv, dial = cfg.Argv, client.Stdio(cfg)
	}
	f, err := capture.Create(path, o.Path != "") // a sample is recorded again over the old one
	if err != nil {
		t.Fatal(err)
	}
	copts := capture.Options{Sonde: "test", Command: argv}
	if o.HTTP {
		copts = capture.Options{Sonde: "test", Transport: "http", URL: argv[0]}
	}
	rec, err := capture.NewRecorder(f, copts)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(client.Options{Timeout: timeout, Era: o.Era, ServerRequests: o.ServerRequests, Inputs: o.Inputs})
	rec.Follow(c)
	if err := c.Connect(dial); err != nil {
		c.Close()
		rec.Close()
		t.Fatal(err)
	}
	run(context.Background(), c)
	c.Close()
	rec.Close()
	return path
}

// Stdio is the fixture on stdio, a child of this test binary with args
// (fixturetest.Argv: the test fails at its end if a process of it is left),
// in the environment of a server (transport.BuildEnv) plus
// fixturetest.ChildEnv, killed 300ms after a close it does not obey.
func Stdio(t testing.TB, args ...string) client.StdioConfig {
	t.Helper()
	argv, _ := fixturetest.Argv(t, args...)
	env, err := transport.BuildEnv(os.Environ(), nil, fixturetest.ChildEnv())
	if err != nil {
		t.Fatal(err)
	}
	return client.StdioConfig{Argv: argv, Env: env, KillAfter: 300 * time.Millisecond}
}

// Records reads every record of a capture, failing the test on any error
// or reader warning (a truncated line, an unknown record type).
func Records(t testing.TB, path string) (capture.Header, []capture.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []capture.Record
	for rec, err := range rd.All() {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if w := rd.Warnings(); len(w) > 0 {
		t.Fatalf("%s: warnings: %v", path, w)
	}
	return rd.Header(), recs
}

// Events reads a capture back as the client events it holds.
func Events(t testing.TB, path string) []client.Event {
	t.Helper()
	h, recs := Records(t, path)
	var evs []client.Event
	for _, rec := range recs {
		ev, ok, err := h.Event(rec)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			evs = append(evs, ev)
		}
	}
	return evs
}
