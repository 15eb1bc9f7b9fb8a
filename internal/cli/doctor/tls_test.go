package doctor_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

// tlsServer serves HTTPS on loopback with a self-signed certificate for
// names (DNS names or IPs), valid from notBefore to notAfter.
func tlsServer(t *testing.T, names []string, notBefore, notAfter time.Time) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes sonde breaks off
	s.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// TestDoctorTLS: each certificate problem is named at the tls step: an
// expired certificate, one for another host, one no known authority
// signed. (Linux: elsewhere the platform's verifier decides which problem
// it reports first.)
func TestDoctorTLS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the order of the certificate checks is the Go verifier's, on Linux")
	}
	now := time.Now()
	expired := tlsServer(t, []string{"127.0.0.1"}, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	other := tlsServer(t, []string{"other.example"}, now.Add(-time.Hour), now.Add(24*time.Hour))
	unknown := tlsServer(t, []string{"127.0.0.1"}, now.Add(-time.Hour), now.Add(24*time.Hour))
	path := writeConfig(t, map[string]any{
		"expired": map[string]any{"url": expired.URL + "/mcp"},
		"other":   map[string]any{"url": other.URL + "/mcp"},
		"unknown": map[string]any{"url": unknown.URL + "/mcp"},
	})
	r := clitest.RunSonde(t, "", "doctor", "--config", path, "--json")
	clitest.CheckRun(t, r, 1, "sonde: doctor: 3 of 3 servers failed\n")
	got := decode(t, r.Stdout)
	for name, want := range map[string][2]string{
		"expired": {"the certificate has expired", "renew"},
		"other":   {"the certificate is not for 127.0.0.1", "host name the certificate names"},
		"unknown": {"signed by an unknown authority", "trust store"},
	} {
		res := got[name]
		last := res.Steps[len(res.Steps)-1]
		if res.Failed != "tls" || !strings.Contains(last.Detail, want[0]) || !strings.Contains(last.Hint, want[1]) {
			t.Errorf("%s: failed at %q: %+v", name, res.Failed, last)
		}
	}
}
