package oauth

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// loopback is the listener on 127.0.0.1 that receives the authorization
// response at redirect; close stops it and waits for its goroutine.
type loopback struct {
	redirect string
	got      chan url.Values // the first response's query
	srv      *http.Server
	served   chan struct{}
}

// listenLoopback starts the listener on a free port.
func listenLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, &Error{Step: "authorization", Msg: "cannot listen on 127.0.0.1 for the redirect: " + err.Error(), Err: err}
	}
	lb := &loopback{redirect: "http://" + ln.Addr().String() + "/callback", got: make(chan url.Values, 1), served: make(chan struct{})}
	lb.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(lb.serve)}
	go func() {
		defer close(lb.served)
		_ = lb.srv.Serve(ln)
	}()
	return lb, nil
}

// serve takes the first request to /callback; a second one is refused.
func (lb *loopback) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	select {
	case lb.got <- r.URL.Query():
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "sonde: authorization received; you may close this page.\n")
	default:
		http.Error(w, "sonde: an authorization response already arrived", http.StatusConflict)
	}
}

// close stops the listener and waits for it.
func (lb *loopback) close() {
	_ = lb.srv.Close()
	<-lb.served
}
