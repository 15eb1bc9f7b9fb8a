package tap

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"

	"github.com/sonde-mcp/sonde/jsonrpc"
	coretap "github.com/sonde-mcp/sonde/tap"
)

type failingTarget struct{ err error }

func (f failingTarget) Inject(context.Context, []byte) ([]byte, error) { return nil, f.err }

// TestInjectConnRefusalCodes: a request the session cannot take (a
// legacy HTTP+SSE session, an HTTP session that ended) is answered
// CodeNoInject, which sonde inject reports as a usage error; any other
// failure of the tap's is an internal error.
func TestInjectConnRefusalCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int64
	}{
		{coretap.ErrLegacyInject, CodeNoInject},
		{coretap.ErrSessionGone, CodeNoInject},
		{errors.New("something else"), jsonrpc.CodeInternalError},
	} {
		a, b := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			serveInjectConn(context.Background(), failingTarget{tc.err}, b)
		}()
		a.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		line, err := bufio.NewReader(a).ReadBytes('\n')
		a.Close()
		<-done
		if err != nil {
			t.Fatalf("%v: no answer: %v", tc.err, err)
		}
		msg, err := jsonrpc.Decode(line)
		if err != nil || msg.Error == nil || int64(msg.Error.Code) != tc.code {
			t.Errorf("%v: answered %s, want code %d", tc.err, line, tc.code)
		}
	}
}
