package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/client"
)

// sessionUpstream is a Streamable HTTP server for the session tests: each
// initialize starts a session (s-1, s-2…); a request is answered with
// JSON, a notification with 202; hold, when set, keeps the answer to the
// method "slow" until it is closed.
func sessionUpstream(t *testing.T, hold chan struct{}) *url.URL {
	var mu sync.Mutex
	var started int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &msg)
		if msg.Method == "initialize" {
			mu.Lock()
			started++
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s-%d", started))
			mu.Unlock()
		}
		if msg.Method == "slow" && hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		if msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	}))
	t.Cleanup(up.Close)
	u, _ := url.Parse(up.URL)
	return u
}

// sessionLog is what the session callbacks saw.
type sessionLog struct {
	mu      sync.Mutex
	started []string
	ended   []string // "id why"
	endedC  chan string
	all     []*client.Observer
}

// options sets o's session callbacks to log here; the observers are
// closed when the test ends (after the proxy: registered before it).
func (l *sessionLog) options(t *testing.T, o ProxyOptions) ProxyOptions {
	l.endedC = make(chan string, 100)
	t.Cleanup(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, obs := range l.all {
			obs.Close()
		}
	})
	o.Sessions = func(id string, _ time.Time) *client.Observer {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.started = append(l.started, id)
		obs := client.NewObserver(0)
		l.all = append(l.all, obs)
		sub := obs.Subscribe(64)
		go func() {
			for range sub.C {
			}
		}()
		return obs
	}
	o.SessionEnded = func(id string, why SessionEnd) {
		l.mu.Lock()
		l.ended = append(l.ended, id+" "+why.String())
		l.mu.Unlock()
		l.endedC <- id + " " + why.String()
	}
	return o
}

func (l *sessionLog) get() (started, ended []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.started...), append([]string(nil), l.ended...)
}

// waitEnded waits (30 s at most) for the next session end.
func (l *sessionLog) waitEnded(t *testing.T) string {
	t.Helper()
	select {
	case e := <-l.endedC:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no session ended within 30s")
		return ""
	}
}

// postSession POSTs body to url in session sid ("" for none) and returns
// the session id of the answer.
func postSession(t *testing.T, url, sid, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get("Mcp-Session-Id")
}

const sessionInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`

// TestProxyMaxSessions: with MaxSessions 3, a fourth and fifth session
// close the sessions idle the longest (not the oldest started: a session
// used since stays), each said through SessionEnded; a closed session
// the host comes back to is observed anew.
func TestProxyMaxSessions(t *testing.T) {
	var l sessionLog
	base, _, _ := serveProxy(t, l.options(t, ProxyOptions{Target: sessionUpstream(t, nil), MaxSessions: 3}))
	a := postSession(t, base+"/mcp", "", sessionInit)
	b := postSession(t, base+"/mcp", "", sessionInit)
	c := postSession(t, base+"/mcp", "", sessionInit)
	postSession(t, base+"/mcp", a, `{"jsonrpc":"2.0","id":2,"method":"ping"}`) // a is used again: b is idle the longest
	d := postSession(t, base+"/mcp", "", sessionInit)
	if got := l.waitEnded(t); got != b+" evicted" {
		t.Errorf("the fourth session closed %q, want %q", got, b+" evicted")
	}
	postSession(t, base+"/mcp", "", sessionInit) // e
	if got := l.waitEnded(t); got != c+" evicted" {
		t.Errorf("the fifth session closed %q, want %q", got, c+" evicted")
	}
	// b again: observed anew (and a, idle the longest now, goes).
	postSession(t, base+"/mcp", b, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := l.waitEnded(t); got != a+" evicted" {
		t.Errorf("b's return closed %q, want %q", got, a+" evicted")
	}
	// b's new observer may be made after a's end is said (the observing
	// is not on the request's path): wait for it, 30 s at most.
	started, _ := l.get()
	for deadline := time.Now().Add(30 * time.Second); len(started) < 6 && time.Now().Before(deadline); started, _ = l.get() {
		time.Sleep(5 * time.Millisecond)
	}
	if want := []string{a, b, c, d, "s-5", b}; fmt.Sprint(started) != fmt.Sprint(want) {
		t.Errorf("sessions observed %v, want %v", started, want)
	}
}

// TestProxySessionIdle: a session nothing went by in for SessionIdle is
// closed (SessionEnded, EndIdle), unless a request of it is in flight;
// the host's next request in it is observed anew.
func TestProxySessionIdle(t *testing.T) {
	hold := make(chan struct{})
	var l sessionLog
	base, _, _ := serveProxy(t, l.options(t, ProxyOptions{Target: sessionUpstream(t, hold), SessionIdle: 100 * time.Millisecond}))
	a := postSession(t, base+"/mcp", "", sessionInit)
	b := postSession(t, base+"/mcp", "", sessionInit)
	slow := make(chan struct{})
	go func() {
		defer close(slow)
		postSession(t, base+"/mcp", b, `{"jsonrpc":"2.0","id":2,"method":"slow"}`)
	}()
	if got := l.waitEnded(t); got != a+" idle" {
		t.Errorf("closed %q, want %q", got, a+" idle")
	}
	// b's call is in flight, long past the idle time: b stays.
	time.Sleep(500 * time.Millisecond)
	if _, ended := l.get(); len(ended) != 1 {
		t.Errorf("sessions ended %v, want only %s (b has a call in flight)", ended, a)
	}
	close(hold)
	<-slow
	if got := l.waitEnded(t); got != b+" idle" {
		t.Errorf("closed %q, want %q", got, b+" idle")
	}
	postSession(t, base+"/mcp", a, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := l.waitEnded(t); got != a+" idle" {
		t.Errorf("closed %q, want %q (a again, observed anew)", got, a+" idle")
	}
	if started, _ := l.get(); fmt.Sprint(started) != fmt.Sprint([]string{a, b, a}) {
		t.Errorf("sessions observed %v, want %v", started, []string{a, b, a})
	}
}
