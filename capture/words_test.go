package capture

import (
	"testing"

	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// TestRecordWords checks the direction and kind constants are the words
// the encoder writes (client.Direction's and jsonrpc.Kind's).
func TestRecordWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{DirOut, client.Out.String()},
		{DirIn, client.In.String()},
		{KindRequest, jsonrpc.KindRequest.String()},
		{KindResponse, jsonrpc.KindResponse.String()},
		{KindNotification, jsonrpc.KindNotification.String()},
		{KindInvalid, jsonrpc.KindInvalid.String()},
	} {
		if c.got != c.want {
			t.Errorf("constant %q, encoder writes %q", c.got, c.want)
		}
	}
}
