package doctor_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// TestDoctorHTTP: the HTTP fixture passes every step; a server whose
// certificate no authority signed fails at tls, named.
func TestDoctorHTTP(t *testing.T) {
	base := clitest.FixtureHTTP(t)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes sonde breaks off
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	path := writeConfig(t, map[string]any{
		"fixture":    map[string]any{"url": base + "/mcp"},
		"selfsigned": map[string]any{"url": tlsSrv.URL + "/mcp"},
		"legacy":     map[string]any{"url": base + "/sse"},
		"nowhere":    map[string]any{"url": base + "/nowhere"},
	})
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json", "--timeout", "5s")
	clitest.CheckRun(t, r, 1, "sonde: doctor: 2 of 4 servers failed\n")
	got := decode(t, r.Stdout)

	f := got["fixture"]
	var names []string
	for _, st := range f.Steps {
		names = append(names, st.Name)
	}
	if !f.OK || strings.Join(names, " ") != "config url dns tcp post session initialize protocol capabilities tools/list tool schemas ping lint" {
		t.Errorf("fixture over HTTP: ok %v, steps %s\n%s", f.OK, names, r.Stdout)
	}
	for _, st := range f.Steps {
		if st.Name == "post" && !strings.HasPrefix(st.Detail, "HTTP 200") {
			t.Errorf("post step %q", st.Detail)
		}
	}

	// The fixture's /sse is the legacy transport: the POST's 405 makes
	// sonde fall back, which the post step notes.
	lg := got["legacy"]
	if !lg.OK || len(lg.Steps) < 5 || lg.Steps[4].Name != "post" || !strings.Contains(lg.Steps[4].Detail, "HTTP 405") || !strings.Contains(lg.Steps[4].Detail, "fell back to the legacy HTTP+SSE transport") {
		t.Errorf("legacy: %+v", lg)
	}
	nw := got["nowhere"]
	if last := nw.Steps[len(nw.Steps)-1]; nw.Failed != "post" || !strings.Contains(last.Detail, "HTTP 404") || !strings.Contains(last.Hint, "MCP endpoint") {
		t.Errorf("nowhere: failed at %q: %+v", nw.Failed, last)
	}

	s := got["selfsigned"]
	last := s.Steps[len(s.Steps)-1]
	if s.Failed != "tls" || !strings.Contains(last.Detail, "unknown authority") || !strings.Contains(last.Hint, "trust store") {
		t.Errorf("self-signed: failed at %q: %+v", s.Failed, last)
	}
}
