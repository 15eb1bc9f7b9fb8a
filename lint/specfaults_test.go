package lint

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/capturetest"
)

// modernCalls starts a modern session (server/discover), lists the tools
// and calls echo; the call's error is not the test's business (a fault may
// make sonde's client refuse the answer).
func modernCalls(t *testing.T) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		initialize(t, ctx, c)
		if _, err := c.ListTools(ctx); err != nil {
			t.Logf("tools/list: %v", err)
		}
		_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{})
		t.Logf("echo: %v", err)
	}
}

// legacyCalls initializes, lists the tools and calls echo and add (the
// tools with an outputSchema).
func legacyCalls(t *testing.T) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		initialize(t, ctx, c)
		if _, err := c.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
		for _, call := range []struct{ name, args string }{{"echo", `{"value":"x"}`}, {"add", `{"a":1,"b":2}`}} {
			_, _, err := c.CallTool(ctx, call.name, json.RawMessage(call.args), client.CallOptions{})
			t.Logf("%s: %v", call.name, err)
		}
	}
}

// TestSpecFaults lints real sessions against the fixture modes made for
// the late-2026 rules: each shows exactly its rule, and the same session
// without the fault shows none (the passing side).
func TestSpecFaults(t *testing.T) {
	modern := []string{"--era", "modern"}
	cases := []struct {
		name  string
		o     capturetest.Options
		run   func(t *testing.T) func(context.Context, *client.Client)
		fault string
		want  []string
	}{
		{name: "structured-no-text", run: legacyCalls, fault: "structured-no-text", want: []string{RuleStructuredText}},
		{name: "structured-no-text-http", o: capturetest.Options{HTTP: true}, run: legacyCalls, fault: "structured-no-text", want: []string{RuleStructuredText}},
		{name: "bad-output-schema", run: legacyCalls, fault: "bad-output-schema", want: []string{RuleOutputSchema}},
		{name: "no-result-type", o: capturetest.Options{Fixture: modern, Era: client.EraModern}, run: modernCalls, fault: "no-result-type", want: []string{RuleResultType}},
		{name: "undeclared-extension", o: capturetest.Options{Fixture: modern, Era: client.EraModern}, run: modernCalls, fault: "undeclared-extension", want: []string{RuleUnnegotiatedExt}},
		{name: "malformed-extension", o: capturetest.Options{Fixture: modern, Era: client.EraModern}, run: modernCalls, fault: "malformed-extension", want: []string{RuleMalformedExt}},
		{name: "http-no-content-type", o: capturetest.Options{HTTP: true, Fixture: []string{"--http-json"}}, run: modernOrLegacyCall, fault: "http-no-content-type", want: []string{RuleContentType}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, faulty := range []bool{false, true} {
				o := tc.o
				o.Fixture = slices.Clone(tc.o.Fixture)
				want := []string(nil)
				if faulty {
					o.Fixture = append(o.Fixture, "--fault", tc.fault)
					want = tc.want
				}
				fs := lintAll(capturetest.Events(t, capturetest.Record(t, o, tc.run(t))))
				// A modern fixture's tools/list carries no cache hints
				// (cache-hint's own sample): not this test's rule.
				fs = slices.DeleteFunc(fs, func(f Finding) bool { return f.Rule == RuleCacheHint })
				if got := names(fs); !slices.Equal(got, want) {
					for _, f := range fs {
						t.Logf("%s seq %d: %s", f.Rule, f.Seq, f.Detail)
					}
					t.Fatalf("fault %v: rules found %v, want %v", faulty, got, want)
				}
				for _, f := range fs {
					if f.Seq == 0 || len(f.Raw) == 0 || f.Detail == "" {
						t.Errorf("finding %+v does not point at its event", f)
					}
				}
			}
		})
	}
}

// modernOrLegacyCall initializes and calls echo once, whatever comes of it.
func modernOrLegacyCall(t *testing.T) func(context.Context, *client.Client) {
	return func(ctx context.Context, c *client.Client) {
		initialize(t, ctx, c)
		_, _, err := c.CallTool(ctx, "echo", json.RawMessage(`{"value":"x"}`), client.CallOptions{})
		t.Logf("echo: %v", err)
	}
}

// TestModernHTTPClean: sonde's own modern session over HTTP (its headers
// built from each body) shows none of the header rules, and its exchanges
// did carry the headers they are checked on.
func TestModernHTTPClean(t *testing.T) {
	o := capturetest.Options{HTTP: true, Fixture: []string{"--era", "modern"}, Era: client.EraModern}
	evs := capturetest.Events(t, capturetest.Record(t, o, modernCalls(t)))
	fs := slices.DeleteFunc(lintAll(evs), func(f Finding) bool { return f.Rule == RuleCacheHint })
	if len(fs) != 0 {
		t.Fatalf("findings %+v", fs)
	}
	checked := 0
	for _, ev := range evs {
		if ev.HTTP != nil && slices.ContainsFunc(ev.HTTP.Header, func(h string) bool { return strings.HasPrefix(h, "> Mcp-Method: ") }) &&
			slices.ContainsFunc(ev.HTTP.Header, func(h string) bool { return strings.HasPrefix(h, "> MCP-Protocol-Version: ") }) {
			checked++
		}
	}
	if checked < 3 {
		t.Errorf("%d exchanges carried Mcp-Method and MCP-Protocol-Version: the header rules were not exercised", checked)
	}
	// The same exchanges with another version in their header: each is
	// held to its request (still pending when the exchange is noted).
	for i, ev := range evs {
		if ev.HTTP == nil || ev.HTTP.Method != "POST" || !ev.HTTP.ReqID.IsValid() {
			continue
		}
		h := *ev.HTTP
		h.Header = slices.Clone(h.Header)
		for j, line := range h.Header {
			if strings.HasPrefix(line, "> MCP-Protocol-Version: ") {
				h.Header[j] = "> MCP-Protocol-Version: 2025-11-25"
			}
		}
		evs[i].HTTP = &h
	}
	fs = slices.DeleteFunc(lintAll(evs), func(f Finding) bool { return f.Rule != RuleHeaderMismatch })
	if len(fs) < 3 {
		t.Errorf("%d header-mismatch findings on %d edited exchanges", len(fs), checked)
	}
}

// TestDPoPDowngradeLive: a real session through sonde's OAuth flow against
// the fixture's authorization server. With --http-auth dpop-bearer it
// lists ES256 for DPoP, sonde's token request carries a proof, and the
// token comes back Bearer: dpop-downgrade, once, at the token exchange.
// Without the variant (no DPoP advertised) the same session shows none.
func TestDPoPDowngradeLive(t *testing.T) {
	for _, faulty := range []bool{false, true} {
		o := capturetest.Options{HTTP: true, OAuth: true, Fixture: []string{"--fault", "http-unauthorized"}}
		want := []string(nil)
		if faulty {
			o.Fixture = append(o.Fixture, "--http-auth", "dpop-bearer")
			want = []string{RuleDPoPDowngrade}
		}
		fs := lintAll(capturetest.Events(t, capturetest.Record(t, o, modernOrLegacyCall(t))))
		if got := names(fs); !slices.Equal(got, want) {
			for _, f := range fs {
				t.Logf("%s seq %d: %s", f.Rule, f.Seq, f.Detail)
			}
			t.Errorf("faulty %v: findings %v, want %v", faulty, got, want)
		}
		if faulty && len(fs) == 1 && !strings.Contains(fs[0].Detail, "token_type Bearer, not DPoP") {
			t.Errorf("detail %q", fs[0].Detail)
		}
	}
}
