package loopback

import "testing"

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:8080": true, "127.0.0.1": true, "127.9.9.9:1": true,
		"::1": true, "[::1]:80": true, "::ffff:127.0.0.1": true, "[::ffff:127.0.0.1]:9": true,
		"10.0.0.1": false, "example.com": false, "localhost.example.com": false, "": false,
		"0.0.0.0:80": false, "[fe80::1]:80": false, "169.254.169.254": false,
	} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"": true, "http://localhost:6274": true, "http://127.0.0.1": true, "https://[::1]:8443": true, "HTTP://LOCALHOST": true,
		"http://127.0.0.1:9/": true,
		"null":                false, "http://evil.example": false, "http://127.0.0.1.evil.example": false, "http://localhost.evil.example": false,
		"file://": false, "ws://localhost": false, "http://user@localhost": false, "http://localhost/path": false,
		" ": false, "localhost": false, "//localhost": false, "http://": false, "http://localhost?x": false,
	} {
		if got := Origin(origin); got != want {
			t.Errorf("Origin(%q) = %v, want %v", origin, got, want)
		}
	}
}
