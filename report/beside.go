package report

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
)

// besideTries bounds the names WriteBeside tries (NAME.html, NAME-2.html, …).
const besideTries = 100

// WriteBeside writes the page of the capture at path to a new file beside
// it, named for it (bug.jsonl → bug.html, or bug-2.html when that is
// taken: no file is overwritten), and returns that file's path. A capture
// still being written is read as far as it goes. On failure nothing is
// left behind.
func WriteBeside(path string, o Options) (string, error) {
	var b *Builder
	_, _, err := capture.EachEvent(path, func(h capture.Header) {
		b = New(h, o)
	}, func(ev client.Event, _ int) { b.Add(ev) })
	if err != nil {
		return "", err
	}
	if b == nil {
		return "", fmt.Errorf("%s: no capture header", path)
	}
	base := strings.TrimSuffix(path, filepath.Ext(path))
	for i := 1; i <= besideTries; i++ {
		out := base + ".html"
		if i > 1 {
			out = fmt.Sprintf("%s-%d.html", base, i)
		}
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		bw := bufio.NewWriter(f)
		err = Write(bw, b.Model())
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(out)
			return "", err
		}
		return out, nil
	}
	return "", fmt.Errorf("%s.html and %d more names beside it are taken", base, besideTries-1)
}

// Beside is WriteBeside as the UI's X calls it: each page names its
// capture's file and sonde's version v.
func Beside(v string) func(path string) (string, error) {
	return func(path string) (string, error) {
		return WriteBeside(path, Options{File: filepath.Base(path), Sonde: v})
	}
}
