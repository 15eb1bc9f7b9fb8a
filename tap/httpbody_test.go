package tap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockedBuf is a log sink safe for the server's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A server that answers a POST before it has read its body, many times
// over one keep-alive connection of the host's: the transport reads the
// host's body on after the answer is back, which (with the body streamed
// from the host's connection) made the tap's HTTP server panic with
// "invalid concurrent Body.Read call" and drop the host's connection.
// Every answer must arrive and the tap's server must log no panic, for a
// body within MaxMessageBytes (read whole) and a longer one (streamed).
func TestProxyEarlyAnswerKeepAlive(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
	}{{"whole", 0}, {"streamed", 1024}} {
		t.Run(tc.name, func(t *testing.T) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
				w.(http.Flusher).Flush()
				io.Copy(io.Discard, r.Body)
			}))
			defer up.Close()
			target, _ := url.Parse(up.URL)
			p := NewProxy(ProxyOptions{Target: target, MaxMessageBytes: tc.max})
			var logged lockedBuf
			srv := httptest.NewUnstartedServer(p)
			srv.Config.ErrorLog = log.New(&logged, "", 0)
			srv.Start()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + strings.Repeat("x", 48<<10) + `"}}}`
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			failed := 0
			for i := range 300 {
				resp, err := hc.Post(srv.URL+"/mcp", "application/json", strings.NewReader(body))
				if err != nil {
					failed++
					t.Logf("POST %d: %v", i, err)
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"result"`) {
					failed++
					t.Logf("POST %d: HTTP %d %q", i, resp.StatusCode, got)
				}
			}
			hc.CloseIdleConnections()
			srv.Close()
			p.Close()
			if failed > 0 {
				t.Errorf("%d of 300 POSTs got no answer", failed)
			}
			if s := logged.String(); strings.Contains(s, "panic") {
				t.Errorf("the tap's server panicked:\n%s", firstLines(s, 8))
			}
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("(%d more bytes)", len(s)))
	}
	return strings.Join(lines, "\n")
}

// readAfter records reads of a host's body after its handler returned.
type readAfter struct {
	r        io.Reader
	returned atomic.Bool
	late     atomic.Int64
}

func (b *readAfter) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.returned.Load() { // (a read that began before, and ended after, counts)
		b.late.Add(1)
	}
	return n, err
}

func (b *readAfter) Close() error { return nil }

// The window behind the panic above, made certain: the server answers at
// once (a whole answer, before it reads the body), and the host sends the rest of its body only once the tap's
// handler has returned (or after 3 s, if it is still running). Nothing may
// read the host's body after its handler returned: within
// MaxMessageBytes the tap reads it whole first; beyond, it stops the
// body's reads before it returns.
func TestProxyReadsNoBodyAfterReturn(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
	}{{"whole", 0}, {"streamed", 16}} {
		t.Run(tc.name, func(t *testing.T) {
			target := earlyServer(t)
			p := NewProxy(ProxyOptions{Target: target, MaxMessageBytes: tc.max})
			defer p.Close()
			pr, pw := io.Pipe()
			body := &readAfter{r: pr}
			msg := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 256) + `"}}`
			returned := make(chan struct{})
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				io.WriteString(pw, msg[:40])
				tm := time.NewTimer(3 * time.Second)
				defer tm.Stop()
				select {
				case <-returned:
				case <-tm.C:
				}
				io.WriteString(pw, msg[40:])
				pw.Close()
			}()
			r := httptest.NewRequest(http.MethodPost, "/mcp", body)
			r.ContentLength = int64(len(msg))
			w := httptest.NewRecorder()
			p.ServeHTTP(w, r)
			body.returned.Store(true)
			close(returned)
			<-wrote
			if n := body.late.Load(); n > 0 {
				t.Errorf("the host's body was read %d times after the handler returned", n)
			}
			if !strings.Contains(w.Body.String(), `"result"`) {
				t.Errorf("the host got %d %q, want the answer", w.Code, w.Body.String())
			}
		})
	}
}

// earlyServer is an HTTP/1.1 server on loopback that answers every request
// whole as soon as it has its headers, then reads on and drops its body
// (as a server may that answers once it has parsed enough).
func earlyServer(t *testing.T) *url.URL {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				const answer = `{"jsonrpc":"2.0","id":1,"result":{}}`
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, br)
			}()
		}
	}()
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}
