package report

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed" // the page's assets
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
	//go:embed filter.js
	filterJS string
)

// ErrAsset is returned when an asset of the page would end its own
// element early (a "</" in the CSS or script): a bug of sonde's, caught by
// the tests.
var ErrAsset = errors.New("report: an asset of the page contains </")

// Write writes the page of m: the HTML skeleton, its CSS and script
// inline, and m as gzipped JSON in base64. The page's Content-Security-
// Policy allows only its own script and style (by hash) and no fetch of
// any kind, so it works offline from file:// and nothing in it loads
// anything.
func Write(w io.Writer, m *Model) error {
	js := filterJS + "\n" + pageJS
	if strings.Contains(js, "</") || strings.Contains(pageCSS, "</") {
		return ErrAsset
	}
	data, err := Encode(m)
	if err != nil {
		return err
	}
	page := strings.NewReplacer(
		"{{.ScriptHash}}", hash(js), "{{.StyleHash}}", hash(pageCSS),
		"{{.CSS}}", pageCSS, "{{.JS}}", js, "{{.Data}}", data,
	).Replace(pageHTML)
	_, err = io.WriteString(w, page)
	return err
}

// Encode is m as the page embeds it: JSON, gzipped, in base64 (which
// holds no character HTML would read).
func Encode(m *Model) (string, error) {
	var buf bytes.Buffer
	b64 := base64.NewEncoder(base64.StdEncoding, &buf)
	zw, err := gzip.NewWriterLevel(b64, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if err := json.NewEncoder(zw).Encode(m); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	if err := b64.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// hash is a CSP source for an inline element's text.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
