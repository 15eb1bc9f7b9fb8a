package mcpserver

import (
	"context"
	"os"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceSubscribe is resources/subscribe (sdk.ServerOptions'
// SubscribeHandler): a capture that exists, watched from then on; it is
// told (notifications/resources/updated) each time it grew.
func (s *Server) resourceSubscribe(_ context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	path, err := s.resourcePath(uri)
	if err != nil {
		return err
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	r := s.res
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs[uri] = size
	if r.stop == nil {
		r.stop, r.done = make(chan struct{}), make(chan struct{})
		go s.watchResources(r.stop, r.done)
	}
	return nil
}

// resourceUnsubscribe is resources/unsubscribe: the capture is no longer
// watched.
func (s *Server) resourceUnsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	delete(s.res.subs, req.Params.URI)
	return nil
}

// watchResources looks at the captures subscribed to every watchPoll
// until stop, and tells the subscribers of each that grew.
func (s *Server) watchResources(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, uri := range s.grown() {
			_ = s.sdk.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}

// grown returns the URIs subscribed to whose capture grew since they were
// last told, and notes their new sizes.
func (s *Server) grown() []string {
	r := s.res
	r.mu.Lock()
	uris := make(map[string]int64, len(r.subs))
	for u, n := range r.subs {
		uris[u] = n
	}
	r.mu.Unlock()
	var out []string
	for uri, was := range uris {
		path, err := s.resourcePath(uri)
		if err != nil {
			continue
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() == was {
			continue
		}
		r.mu.Lock()
		if _, still := r.subs[uri]; still {
			r.subs[uri] = st.Size()
			out = append(out, uri)
		}
		r.mu.Unlock()
	}
	return out
}

// closeResources stops the watch and removes the server's own captures'
// folder.
func (s *Server) closeResources() {
	r := s.res
	if r == nil {
		return
	}
	r.mu.Lock()
	stop, done, dir := r.stop, r.done, r.dir
	r.stop, r.dir = nil, ""
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
}
