package clients_test

import (
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/clients"
)

// FuzzApply: any lines, either way, fold without a panic, and the host's
// requests counted are at most the lines it sent.
func FuzzApply(f *testing.F) {
	f.Add(initialize(1, "h", "1", "2025-06-18", `{"roots":{"listChanged":true}}`) + "\n" + result(1, `{}`) + "\n" + echo(2, "x", 0, `{"progressToken":1}`))
	f.Add(request(1, "tools/list", `{"cursor":7}`) + "\n" + result(1, `{"ttlMs":1e308}`) + "\n" + request(2, "tools/list", `{}`))
	f.Add(request(1, "server/discover", `{"_meta":{"io.modelcontextprotocol/clientInfo":7,"io.modelcontextprotocol/clientCapabilities":[1],"traceparent":{}}}`))
	f.Add(cancelled(1) + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":7}`)
	f.Fuzz(func(t *testing.T, text string) {
		fold := clients.New()
		sent := 0
		for i, line := range strings.Split(text, "\n") {
			dir := client.Out
			if strings.Contains(line, `"result"`) || strings.Contains(line, "notifications/") && i%2 == 1 {
				dir = client.In
			}
			if dir == client.Out {
				sent++
			}
			fold.Apply(frame(dir, i, line))
		}
		n := 0
		for _, s := range fold.Sessions() {
			n += s.Requests
			if s.MaxInFlight > s.Requests || s.Retries > s.Requests || s.Refetches > s.Requests {
				t.Fatalf("%+v", s)
			}
		}
		if n > sent {
			t.Fatalf("%d requests of %d lines sent", n, sent)
		}
	})
}
