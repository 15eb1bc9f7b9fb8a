package observe

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// ErrCrossOrigin is the cause of an export a collector redirected to
// another origin: the exports carry --otlp-header (an API key, often),
// which must not reach wherever a collector points.
var ErrCrossOrigin = errors.New("redirect to another origin refused (the OTLP headers are sent to the endpoint's origin only)")

// maxRedirects bounds the same-origin redirects one export follows (Go's
// own bound).
const maxRedirects = 10

// exportClient is the HTTP client of one exporter (signal "TRACES" or
// "METRICS"): it follows redirects within the endpoint's origin only (Go's
// client would carry every header but Authorization and Cookie to any
// host, and those two to another port of the same host), bounds a request
// to timeout, and takes the TLS files of the OTEL_EXPORTER_OTLP_*CERTIFICATE
// variables as the SDK would (its own client, which reads them, is
// replaced).
func exportClient(signal string, timeout time.Duration) (*http.Client, error) {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	tc, err := tlsFromEnv(signal)
	if err != nil {
		return nil, err
	}
	tr.TLSClientConfig = tc
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: sameOrigin}, nil
}

// sameOrigin is a CheckRedirect that follows a redirect only to the origin
// (scheme, host and port) of the first request.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if from, to := origin(via[0].URL), origin(req.URL); from != to {
		return fmt.Errorf("%w: from %s to %s", ErrCrossOrigin, from, to)
	}
	return nil
}

// origin is u's scheme://host:port, the port filled in when u leaves it
// to the scheme, host lower-cased.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// tlsFromEnv reads OTEL_EXPORTER_OTLP_[signal_]CERTIFICATE (the CA
// bundle), _CLIENT_CERTIFICATE and _CLIENT_KEY (a client certificate):
// nil when none is set. A file that cannot be read is an error.
func tlsFromEnv(signal string) (*tls.Config, error) {
	get := func(name string) (string, string) {
		for _, v := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if s := os.Getenv(v); s != "" {
				return v, s
			}
		}
		return "", ""
	}
	caVar, ca := get("CERTIFICATE")
	certVar, cert := get("CLIENT_CERTIFICATE")
	keyVar, key := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caVar, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caVar, ca)
		}
		tc.RootCAs = pool
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together (%s%s is set alone)", certVar, keyVar)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certVar, keyVar, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
