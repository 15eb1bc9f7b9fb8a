package live_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestHTMLErrorPage: a server (a proxy, a wrong URL) answering 404 or 502
// with an HTML page is reported by the page's title or first line, over a
// real loopback socket, never with the whole page.
func TestHTMLErrorPage(t *testing.T) {
	filler := strings.Repeat("<p>lorem ipsum</p>\n", 300)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>"+filler+"</body></html>")
		default:
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "<html><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>"+filler+"</body></html>")
		}
	}))
	defer srv.Close()
	for _, tc := range []struct{ path, want string }{
		{"/missing", `HTTP 404: an HTML page titled "404 Not Found"`},
		{"/mcp", `HTTP 502: an HTML page: "502 Bad Gateway"`},
	} {
		r := clitest.RunSonde(t, "", "tools", "--url", srv.URL+tc.path)
		if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) || strings.Contains(r.Stderr, "lorem") {
			t.Errorf("%s: exit %d, stderr:\n%s\nwant %q", tc.path, r.Code, r.Stderr, tc.want)
		}
	}
}
