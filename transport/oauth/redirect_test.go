package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The flow's POSTs (the code and PKCE verifier, a client secret, a
// registration) follow no redirect: a 307 or 308 would carry their body
// to another host. The refusal names the status.
func TestFlowPostsFollowNoRedirect(t *testing.T) {
	var mu sync.Mutex
	var stolen []string
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		stolen = append(stolen, r.Method+" "+r.URL.Path+" "+r.PostForm.Encode())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"access_token":"evil","token_type":"Bearer","client_id":"evil"}`))
	}))
	defer evil.Close()
	red := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer red.Close()
	as := &ServerMetadata{TokenEndpoint: red.URL + "/token", RegistrationEndpoint: red.URL + "/register"}

	a, _ := testAuthorizer(t, &Config{})
	err := testFlow(t, a).exchange(grant{as: as, clientID: "c", secret: "s3cret", method: "client_secret_post"}, "the-code", "the-verifier")
	if err == nil || !strings.Contains(err.Error(), "HTTP 307, a redirect to \""+evil.URL+"/token\", not followed") {
		t.Errorf("exchange: %v", err)
	}
	g := grant{as: as, redirect: "http://127.0.0.1:1/callback"}
	if err := testFlow(t, a).register(&g); err == nil || !strings.Contains(err.Error(), "HTTP 307, a redirect to \""+evil.URL+"/register\", not followed") {
		t.Errorf("register: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) != 0 {
		t.Errorf("the other host got %q", stolen)
	}
}
