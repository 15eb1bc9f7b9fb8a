// Package browsertest runs a real headless Chromium for tests and drives
// it through the DevTools protocol over --remote-debugging-pipe (JSON
// messages ended by NUL on file descriptors 3 and 4), so it needs no
// websocket and no third-party client. A test opens a page, evaluates
// script in it, counts the network requests it made, and takes
// screenshots.
package browsertest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Path finds Debian's chromium (or another Chromium on PATH). Without one
// the test is skipped, or fails when CI is set: `make tools` installs it.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (make tools installs it)")
	}
	t.Skip("chromium is not installed: `make tools` installs it (apt-get install chromium)")
	return ""
}

// Browser is a running headless Chromium.
type Browser struct {
	t      testing.TB
	cmd    *exec.Cmd
	w, rf  *os.File
	r      *bufio.Reader
	next   atomic.Int64
	events []Message
}

// Message is a DevTools message: a reply (ID set) or an event (Method).
type Message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Start starts Chromium with its own profile folder; it is stopped at the
// end of the test. Extra flags (such as a window size) come after sonde's.
func Start(t testing.TB, flags ...string) *Browser {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the DevTools pipe is file descriptors 3 and 4, which Windows does not pass to a child")
	}
	path := Path(t)
	toR, toW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--user-data-dir=" + t.TempDir(), "--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--mute-audio",
		"--hide-scrollbars", "about:blank"}, flags...)
	cmd := exec.Command(path, args...)
	cmd.ExtraFiles = []*os.File{toR, fromW} // fd 3: what it reads; fd 4: what it writes
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	toR.Close()
	fromW.Close()
	b := &Browser{t: t, cmd: cmd, w: toW, rf: fromR, r: bufio.NewReaderSize(fromR, 1<<20)}
	t.Cleanup(b.stop)
	return b
}

// stop ends the browser and waits for it.
func (b *Browser) stop() {
	b.w.Close()
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-done
	}
	b.rf.Close()
}

// Call sends method with params (in session, "" for the browser) and
// returns its result, keeping the events that arrive meanwhile. It fails
// the test after timeout.
func (b *Browser) Call(session, method string, params any, timeout time.Duration) (json.RawMessage, error) {
	id := b.next.Add(1)
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	msg, _ := json.Marshal(struct {
		ID        int64           `json:"id"`
		SessionID string          `json:"sessionId,omitempty"`
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params"`
	}{id, session, method, raw})
	if _, err := b.w.Write(append(msg, 0)); err != nil {
		return nil, err
	}
	if err := b.rf.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	for {
		line, err := b.r.ReadBytes(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var m Message
		if err := json.Unmarshal(line[:len(line)-1], &m); err != nil {
			return nil, fmt.Errorf("%s: a reply that is not JSON: %w", method, err)
		}
		switch {
		case m.ID == id && m.Error != nil:
			return nil, errors.New(method + ": " + m.Error.Message)
		case m.ID == id:
			return m.Result, nil
		case m.Method != "":
			b.events = append(b.events, m)
		}
	}
}

// Events returns the events received so far with a method of that name.
func (b *Browser) Events(method string) []Message {
	var out []Message
	for _, m := range b.events {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Page is a tab attached through a flat session.
type Page struct {
	b       *Browser
	session string
}

// Open opens a new tab with the network off, enables its Network, Page
// and Runtime domains (so that every request it makes is seen) and
// navigates to url.
func (b *Browser) Open(url string, width, height int) *Page {
	b.t.Helper()
	res := b.must("", "Target.createTarget", map[string]any{"url": "about:blank"})
	var tg struct{ TargetID string }
	json.Unmarshal(res, &tg)
	res = b.must("", "Target.attachToTarget", map[string]any{"targetId": tg.TargetID, "flatten": true})
	var at struct{ SessionID string }
	json.Unmarshal(res, &at)
	p := &Page{b: b, session: at.SessionID}
	for _, d := range []string{"Network.enable", "Page.enable", "Runtime.enable"} {
		b.must(p.session, d, map[string]any{})
	}
	b.must(p.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height,
		"deviceScaleFactor": 1, "mobile": width < 600})
	// The network is off: a page under test works from file:// alone.
	b.must(p.session, "Network.emulateNetworkConditions", map[string]any{"offline": true, "latency": 0,
		"downloadThroughput": -1, "uploadThroughput": -1})
	b.must(p.session, "Page.navigate", map[string]any{"url": url})
	return p
}

func (b *Browser) must(session, method string, params any) json.RawMessage {
	b.t.Helper()
	res, err := b.Call(session, method, params, 60*time.Second)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// Eval evaluates expr in the page (awaiting a promise) and decodes its
// value into out. A thrown exception is an error.
func (p *Page) Eval(expr string, out any) error {
	res, err := p.b.Call(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true,
		"returnByValue": true}, 60*time.Second)
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return errors.New(r.ExceptionDetails.Text + " " + r.ExceptionDetails.Exception.Description)
	}
	if out == nil || len(r.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// MustEval is Eval that fails the test.
func (p *Page) MustEval(expr string, out any) {
	p.b.t.Helper()
	if err := p.Eval(expr, out); err != nil {
		p.b.t.Fatalf("%s: %v", expr, err)
	}
}

// WaitFor polls expr (a boolean expression) until it is true, failing the
// test after timeout.
func (p *Page) WaitFor(expr string, timeout time.Duration) {
	p.b.t.Helper()
	end := time.Now().Add(timeout)
	for {
		var ok bool
		if err := p.Eval("!!("+expr+")", &ok); err == nil && ok {
			return
		}
		if time.Now().After(end) {
			p.b.t.Fatalf("page: %s still false after %v", expr, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Screenshot is a PNG of the viewport.
func (p *Page) Screenshot() []byte {
	p.b.t.Helper()
	res := p.b.must(p.session, "Page.captureScreenshot", map[string]any{"format": "png"})
	var r struct{ Data string }
	json.Unmarshal(res, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		p.b.t.Fatal(err)
	}
	return png
}

// Requests returns the URLs of the requests the browser's pages made,
// except those of file:// (the page itself) and data:, and those the
// browser blocked before they left (Blocked).
func (b *Browser) Requests() []string {
	blocked := b.blocked()
	var out []string
	for _, m := range b.Events("Network.requestWillBeSent") {
		var ev struct {
			RequestID string `json:"requestId"`
			Request   struct{ URL string }
		}
		json.Unmarshal(m.Params, &ev)
		if !strings.HasPrefix(ev.Request.URL, "file://") && !strings.HasPrefix(ev.Request.URL, "data:") && blocked[ev.RequestID] == "" {
			out = append(out, ev.Request.URL)
		}
	}
	return out
}

// Blocked returns the reasons the browser gave for the requests it stopped
// before they left (such as "csp"), one per request.
func (b *Browser) Blocked() []string {
	var out []string
	for _, r := range b.blocked() {
		out = append(out, r)
	}
	return out
}

// blocked maps a request's id to the reason it was blocked.
func (b *Browser) blocked() map[string]string {
	out := map[string]string{}
	for _, m := range b.Events("Network.loadingFailed") {
		var ev struct {
			RequestID     string `json:"requestId"`
			BlockedReason string `json:"blockedReason"`
		}
		json.Unmarshal(m.Params, &ev)
		if ev.BlockedReason != "" {
			out[ev.RequestID] = ev.BlockedReason
		}
	}
	return out
}

// Press types one key into the page as a user would: "/", "j", "Enter",
// "Escape".
func (p *Page) Press(key string) {
	p.b.t.Helper()
	ev := map[string]any{"key": key}
	switch key {
	case "Enter":
		ev["code"], ev["windowsVirtualKeyCode"], ev["text"] = "Enter", 13, "\r"
	case "Escape":
		ev["code"], ev["windowsVirtualKeyCode"] = "Escape", 27
	default:
		ev["text"] = key
	}
	down := map[string]any{"type": "keyDown"}
	if _, ok := ev["text"]; !ok {
		down["type"] = "rawKeyDown"
	}
	for k, v := range ev {
		down[k] = v
	}
	p.b.must(p.session, "Input.dispatchKeyEvent", down)
	p.b.must(p.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key})
}

// Dark asks the page for prefers-color-scheme: dark (or light).
func (p *Page) Dark(on bool) {
	p.b.t.Helper()
	v := "light"
	if on {
		v = "dark"
	}
	p.b.must(p.session, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": v}}})
}
