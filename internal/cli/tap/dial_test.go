package tap_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"time"
)

// dialArg, first on the command line of a re-executed test binary, makes
// it dialAs: connect to the socket named next, send a ping (or the
// request after it), print the answer (or "closed").
const dialArg = "__dial_socket"

func dialAs(args []string, out io.Writer) int {
	c, err := net.Dial("unix", args[0])
	if err != nil {
		fmt.Fprintln(out, "dial:", err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	req := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if len(args) > 1 { // a request of the test's instead
		req = args[1]
	}
	c.Write([]byte(req + "\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		fmt.Fprintln(out, "closed:", err)
		return 0
	}
	fmt.Fprint(out, line)
	return 0
}
