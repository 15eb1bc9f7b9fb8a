package manager

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Hash identifies a server for the restart policy: the SHA-256 of its
// command, arguments, the names of its environment variables (never their
// values), its working directory and URL, and the content of its
// executable (found on PATH as the spawn would find it). A changed
// configuration or binary gives a new hash, which a quarantine does not
// cover: it must be approved again (Manager.Approve).
func Hash(s Spec) string { return hashWith(s, exeDigest) }

// hashWith is Hash with the executable's digest from exe.
func hashWith(s Spec, exe func(argv0, cwd string) string) string {
	h := sha256.New()
	field := func(tag, v string) {
		io.WriteString(h, tag)
		io.WriteString(h, "\x00")
		io.WriteString(h, v)
		io.WriteString(h, "\x00")
	}
	for _, a := range s.Argv {
		field("arg", a)
	}
	names := make([]string, 0, len(s.Env))
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		field("env", n)
	}
	field("cwd", s.Cwd)
	field("url", s.URL)
	if len(s.Argv) > 0 {
		field("exe", exe(s.Argv[0], s.Cwd))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// exeDigest is the SHA-256 of the executable argv0 names ("missing" when
// it cannot be found or read: a later install changes the hash).
func exeDigest(argv0, cwd string) string {
	path, ok := exePath(argv0, cwd)
	if !ok {
		return "missing"
	}
	return fileDigest(path)
}

// digestCache remembers the digests of the executables of one manager's
// servers (many servers share node, npx or uvx, a large file to read), by
// path, size and modification time.
type digestCache map[string]string

func (c digestCache) digest(argv0, cwd string) string {
	path, ok := exePath(argv0, cwd)
	if !ok {
		return "missing"
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	if d, ok := c[key]; ok {
		return d
	}
	d := fileDigest(path)
	c[key] = d
	return d
}

// exePath is the file the spawn of argv0 would run: found on PATH for a
// bare name, relative to cwd otherwise.
func exePath(argv0, cwd string) (string, bool) {
	path := argv0
	if !strings.ContainsRune(argv0, filepath.Separator) && !strings.ContainsRune(argv0, '/') {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return "", false
		}
		path = p
	} else if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
	return path, true
}

// fileDigest is the SHA-256 of the file at path.
func fileDigest(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "missing"
	}
	defer f.Close()
	d := sha256.New()
	if _, err := io.Copy(d, f); err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(d.Sum(nil))
}
