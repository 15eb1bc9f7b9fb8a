package tap

import (
	"io"
	"time"

	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
)

// faultWriters returns the writers of the three streams with fault rules
// on (chaos.Pipe): the host's stdin and the server's stdout go a whole
// line at a time through the rules; what the host's stdout gets is
// observed as it is written (observation sees what the host received),
// and each rule that fired is noted.
func (t *tap) faultWriters(stdin io.Writer, out, errw io.Writer) (toServer, toHost, toErr io.Writer) {
	p := t.opts.Faults.NewPipe(stdin, out, errw, t.opts.MaxLineBytes, chaosHooks(t))
	t.pipe = p
	return p.ToServer, p.ToHost, p.HostErr
}

func chaosHooks(t *tap) chaos.Hooks {
	return chaos.Hooks{
		Note: t.fault,
		ToHost: func(b []byte) {
			t.offer(chunk{s: streamOut, data: append([]byte(nil), b...), t: time.Now()})
		},
	}
}

// faultOf is the client.Fault of a rule's note.
func faultOf(n chaos.Note) *client.Fault {
	d := client.Out
	if n.Dir == chaos.ToHost {
		d = client.In
	}
	return &client.Fault{Rule: n.Rule, Action: n.Action, Dir: d, Kind: n.Kind, ID: n.ID, Method: n.Method}
}
