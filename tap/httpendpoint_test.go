package tap

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// endpointSpellings are ways a legacy server can name itself in its
// endpoint event (up is its host:port) that a WHATWG URL parser (the
// TypeScript SDK's new URL(data, sseURL)) resolves to it.
func endpointSpellings(up string) map[string]string {
	return map[string]string{
		"absolute":          "data: http://" + up + "/message?sessionId=s\n",
		"scheme-relative":   "data: //" + up + "/message?sessionId=s\n",
		"backslashes":       `data: http:\\` + up + `\message?sessionId=s` + "\n",
		"slash-backslash":   `data: /\` + up + "/message?sessionId=s\n",
		"two-backslashes":   `data: \\` + up + "/message?sessionId=s\n",
		"upper-case scheme": "data: HTTP://" + up + "/message?sessionId=s\n",
		"spaces around":     "data:   http://" + up + "/message?sessionId=s  \n",
		"tab inside":        "data: ht\ttp://" + up + "/message?sessionId=s\n",
		"localhost":         "data: http://localhost:" + up[strings.LastIndex(up, ":")+1:] + "/message?sessionId=s\n",
		"one number":        "data: http://2130706433:" + up[strings.LastIndex(up, ":")+1:] + "/message?sessionId=s\n",
		"two data lines":    "data: //" + up + "\ndata: /message?sessionId=s\n",
	}
}

// legacyServer is a legacy HTTP+SSE server on loopback whose endpoint
// event is head (its lines up to the blank line) and which counts the
// POSTs it gets.
type legacyServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	head  string
	posts int
}

func newLegacyServer(t *testing.T) *legacyServer {
	l := &legacyServer{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			io.Copy(io.Discard, r.Body)
			l.mu.Lock()
			l.posts++
			l.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		l.mu.Lock()
		head := l.head
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// TestProxyEndpointSpellings: for each spelling of the server's own URL
// in a real legacy server's endpoint event (and after an SSE comment),
// the host, resolving the event's data as the TypeScript SDK does (Node's
// URL, when node is installed; the tap's resolver besides), POSTs to the
// tap, and the POST reaches the server through it. An endpoint on a
// third host is left, with a note.
func TestProxyEndpointSpellings(t *testing.T) {
	node, _ := exec.LookPath("node")
	up := newLegacyServer(t)
	target, _ := url.Parse(up.srv.URL)
	cases := endpointSpellings(target.Host)
	cases["after a comment"] = ": hello\n\nevent: endpoint\ndata: //" + target.Host + "/message?sessionId=s\n"
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			head := "event: endpoint\n" + data + "\n"
			if strings.HasPrefix(data, ":") {
				head = data + "\n"
			}
			up.mu.Lock()
			up.head, up.posts = head, 0
			up.mu.Unlock()
			base, _, done := serveProxy(t, ProxyOptions{Target: target, LoopbackOnly: true})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			// The host's EventSource: the first event with data.
			var dataLines []string
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("the stream ended before the endpoint event: %v", err)
				}
				line = strings.TrimRight(line, "\r\n")
				if line == "" && len(dataLines) > 0 {
					break
				}
				if v, ok := strings.CutPrefix(line, "data:"); ok {
					dataLines = append(dataLines, strings.TrimPrefix(v, " "))
				}
			}
			endpoint := strings.Join(dataLines, "\n")
			sseURL, _ := url.Parse(base + "/sse")
			post, err := resolveEndpoint(endpoint, sseURL)
			if err != nil {
				t.Fatalf("endpoint %q: %v", endpoint, err)
			}
			if node != "" {
				out, err := exec.Command(node, "-e", "console.log(new URL(process.argv[1], process.argv[2]).href)", endpoint, sseURL.String()).Output()
				if err != nil {
					t.Fatalf("node: %v", err)
				}
				if href := strings.TrimSpace(string(out)); href != post.String() {
					t.Errorf("Node resolves %q to %s, the tap to %s", endpoint, href, post)
				}
				post, _ = url.Parse(strings.TrimSpace(string(out)))
			}
			if post.Host != sseURL.Host {
				t.Fatalf("the host would POST to %s (endpoint %q), not to the tap %s", post, endpoint, sseURL.Host)
			}
			r, err := http.Post(post.String(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			up.mu.Lock()
			posts := up.posts
			up.mu.Unlock()
			if r.StatusCode != http.StatusAccepted || posts != 1 {
				t.Errorf("POST %s: %d, the server got %d POSTs, want 202 and 1", post, r.StatusCode, posts)
			}
			cancel()
			var exchanges int
			for _, ev := range done() {
				if ev.Kind == client.EvHTTP && ev.HTTP.Method == http.MethodPost {
					exchanges++
				}
			}
			if exchanges != 1 {
				t.Errorf("%d POSTs observed through the tap, want 1", exchanges)
			}
		})
	}
}

// TestEndpointRewriterForeign: an endpoint on a third host, and one the
// tap cannot read, are left as they are, each with a note.
func TestEndpointRewriterForeign(t *testing.T) {
	target, _ := url.Parse("http://up.example:8080")
	for _, data := range []string{"//other.example:8080/m", "http://up.example:9/m", "https://up.example:8080/m", "http://[::1/m"} {
		obs := client.NewObserver(0)
		sub := obs.Subscribe(16)
		p := NewProxy(ProxyOptions{Target: target, Observer: obs})
		in := "event: endpoint\ndata: " + data + "\n\n"
		e := &endpointRewriter{rc: io.NopCloser(strings.NewReader(in)), p: p, ex: &exchange{origin: "http://127.0.0.1:9", uri: "/sse"}, target: target}
		got, _ := io.ReadAll(e)
		p.Close()
		obs.Close()
		var notes []string
		for ev := range sub.C {
			if ev.Kind == client.EvNote {
				notes = append(notes, ev.Note)
			}
		}
		if string(got) != in || len(notes) != 1 || !strings.Contains(notes[0], "not") {
			t.Errorf("%q: got %q, notes %q; want it unchanged, with a note", data, got, notes)
		}
	}
}
