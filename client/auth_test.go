package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/transport"
	"github.com/sonde-mcp/sonde/transport/oauth"
)

// A server that wants a token: initialize fails with MCP_HTTP, whose
// message and data carry what discovery found; discovery's GETs are HTTP
// events of the request, before its outcome; the user's token is in no
// event.
func TestAuthDiscoveryOverHTTP(t *testing.T) {
	base := strings.TrimSuffix(serveFixtureHTTP(t, "--fault", "http-unauthorized"), "/mcp")
	s := dialSession(t, Options{}, HTTP(transport.HTTPConfig{URL: base + "/mcp", Header: http.Header{"Authorization": {"Bearer s3kr1t-wrong"}}}))
	_, err := s.c.Initialize(context.Background())
	if !errors.Is(err, ErrHTTP) || CodeOf(err) != CodeHTTP {
		t.Fatalf("initialize: %v", err)
	}
	a := Authorization(err)
	if a == nil || a.Status != 401 || a.PRM == nil || a.PRM.Resource != base+"/mcp" || a.AS == nil || !a.AS.S256() ||
		a.AS.TokenEndpoint != base+"/as/token" || len(a.Problems) != 0 {
		t.Fatalf("discovery %+v", a)
	}
	want := "MCP_HTTP: initialize 1: HTTP 401: "
	sum := "; authorization: resource " + base + "/mcp, authorization server " + base + "/as (S256 ok, dynamic registration at " + base + "/as/register), scope fixture:tools; "
	if msg := err.Error(); !strings.HasPrefix(msg, want) || !strings.Contains(msg, sum) {
		t.Errorf("message %s", msg)
	}
	s.waitFor("the outcome of initialize", func(ev Event) bool {
		return ev.Kind == EvRequest && ev.Req.ID == jsonrpc.Int(1) && ev.Req.State == StateHTTP
	})
	var gets, outcome int
	for i, ev := range s.snapshot() {
		if strings.Contains(fmt.Sprintf("%+v %s", ev, evHTTPText(ev)), "s3kr1t") {
			t.Errorf("event %d shows the token: %+v", i, ev)
		}
		switch {
		case ev.Kind == EvHTTP && ev.HTTP.Stream == "auth":
			if ev.HTTP.Method != "GET" || ev.HTTP.Status != 200 || ev.HTTP.ReqID != jsonrpc.Int(1) {
				t.Errorf("discovery event %+v", ev.HTTP)
			}
			gets++
			if outcome != 0 {
				t.Errorf("discovery event %d after the outcome", i)
			}
		case ev.Kind == EvRequest && ev.Req.ID == jsonrpc.Int(1) && ev.Req.State == StateHTTP:
			outcome = i
		}
	}
	if gets != 2 || outcome == 0 {
		t.Errorf("%d discovery GETs, outcome at %d", gets, outcome)
	}
}

func evHTTPText(ev Event) string {
	if ev.HTTP == nil {
		return ""
	}
	return strings.Join(ev.HTTP.Header, "\n") + ev.HTTP.Note + string(ev.HTTP.Raw)
}

// A 401 whose body is a JSON-RPC error is MCP_ERROR, as on stdio, and keeps
// the summary of discovery; other errors have no discovery.
func TestAuthorizationOfErrors(t *testing.T) {
	a := &oauth.Discovery{Status: 401, Scope: "s"}
	xe := &transport.ExchangeError{Kind: transport.ExchangeStatus, Status: 401, RPC: &jsonrpc.Error{Code: -32001, Message: "Unauthorized"}, Auth: a}
	e := exchangeErr(xe)
	if e.Code != CodeRemote || !strings.HasSuffix(e.Message, "(HTTP 401); authorization: no protected resource metadata, scope s") || Authorization(e) != a {
		t.Errorf("%v", e)
	}
	if Authorization(ErrTimeout) != nil || Authorization(exchangeErr(&transport.ExchangeError{Kind: transport.ExchangeNetwork})) != nil {
		t.Error("discovery for an error without one")
	}
}
