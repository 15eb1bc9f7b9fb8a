package clients_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/clients"
	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestMain runs sonde (and so the fixture) when the test binary was
// re-executed as it, and the tests otherwise, checking for leaked
// goroutines.
func TestMain(m *testing.M) { clitest.Main(m) }

// host plays an MCP host in front of a real sonde tap (this test binary
// re-executed as sonde) of the fixture: it writes lines and waits for
// answers, so the order the tap sees is the script's.
type host struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	rec   string
}

// hangGuard only keeps a broken tap from hanging the test; it is no speed
// claim.
const hangGuard = 2 * time.Minute

// tapHost starts sonde tap --record in front of the fixture with
// fixtureArgs.
func tapHost(t *testing.T, fixtureArgs ...string) *host {
	t.Helper()
	fx := clitest.NewFixture(t)
	h := &host{t: t, lines: make(chan string, 64), rec: filepath.Join(t.TempDir(), "s.jsonl")}
	h.cmd = exec.Command(os.Args[0], append([]string{"tap", "--record", h.rec, "--"}, fx.Argv(fixtureArgs...)...)...)
	h.cmd.Env = append(os.Environ(), clitest.ChildEnv()...)
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() { h.stdin.Close(); _ = h.cmd.Wait() })
	return h
}

// send writes lines to the tap.
func (h *host) send(lines ...string) {
	h.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(h.stdin, l+"\n"); err != nil {
			h.t.Fatal(err)
		}
	}
}

// await reads the server's lines until the response to id.
func (h *host) await(id int) {
	h.t.Helper()
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				h.t.Fatalf("the tap ended before the answer to id %d", id)
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && string(m.ID) == jsonInt(id) {
				return
			}
		case <-time.After(hangGuard):
			h.t.Fatalf("no answer to id %d", id)
		}
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// end closes the host's side, waits for the tap, and folds its recording.
func (h *host) end() []clients.Session {
	h.t.Helper()
	h.stdin.Close()
	for range h.lines {
	}
	if err := h.cmd.Wait(); err != nil {
		h.t.Fatalf("tap: %v", err)
	}
	return foldFile(h.t, h.rec)
}

// foldFile folds a capture.
func foldFile(t *testing.T, path string) []clients.Session {
	t.Helper()
	f := clients.New()
	if _, warnings, err := capture.EachEvent(path, nil, func(ev client.Event, _ int) { f.Apply(ev) }); err != nil || len(warnings) > 0 {
		t.Fatalf("reading %s: %v %v", path, err, warnings)
	}
	return f.Sessions()
}

// request is a JSON-RPC request line.
func request(id int, method string, params string) string {
	return `{"jsonrpc":"2.0","id":` + jsonInt(id) + `,"method":"` + method + `","params":` + params + `}`
}

// initialize is a legacy handshake's first line.
func initialize(id int, name, version, revision, caps string) string {
	return request(id, "initialize", `{"protocolVersion":"`+revision+`","capabilities":`+caps+`,"clientInfo":{"name":"`+name+`","version":"`+version+`"}}`)
}

const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// echo is a tools/call of the fixture's echo, with extra _meta fields.
func echo(id int, value string, delayMS int, meta string) string {
	args := `{"value":"` + value + `","delay_ms":` + jsonInt(delayMS) + `}`
	if meta != "" {
		return request(id, "tools/call", `{"name":"echo","arguments":`+args+`,"_meta":`+meta+`}`)
	}
	return request(id, "tools/call", `{"name":"echo","arguments":`+args+`}`)
}

func cancelled(id int) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + jsonInt(id) + `,"reason":"timed out"}}`
}

// modernMeta is a 2026-07-28 request's _meta.
func modernMeta(name, version, caps string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps +
		`,"io.modelcontextprotocol/clientInfo":{"name":"` + name + `","version":"` + version + `"}}`
}
