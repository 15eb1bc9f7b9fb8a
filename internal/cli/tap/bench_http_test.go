package tap_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
	"github.com/sonde-mcp/sonde/transport"
)

// BenchmarkTapHTTPEcho: sonde's client calling echo on the fixture over
// Streamable HTTP (its SSE answers), directly and through `sonde tap
// --listen` (as by default, recording to a file, and --no-record), with 1
// and 64 calls in flight. ns/op at c=1 is the latency of one call; at
// c=64, the inverse of the throughput; p50-ns is the median call.
func BenchmarkTapHTTPEcho(b *testing.B) {
	base := clitest.FixtureHTTP(b) + "/mcp"
	for _, via := range vias {
		for _, conc := range []int{1, 64} {
			b.Run(via+"/c="+strconv.Itoa(conc), func(b *testing.B) {
				url := base
				switch via {
				case "tap":
					sessionsHome(b)
					url = startHTTPTap(b, base).url
				case "tap-record-file":
					url = startHTTPTap(b, base, "--record", filepath.Join(b.TempDir(), "s.jsonl")).url
				case "tap-no-record":
					url = startHTTPTap(b, base, "--no-record").url
				}
				benchEcho(b, client.HTTP(transport.HTTPConfig{URL: url, Mode: transport.ModeStreamable}), conc)
			})
		}
	}
}
