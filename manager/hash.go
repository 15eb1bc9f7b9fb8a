package manager

import (
	"crypto/sha256"
	"encoding/hex"
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
func Hash(s Spec) string {
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
		field("exe", exeDigest(s.Argv[0], s.Cwd))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// exeDigest is the SHA-256 of the executable argv0 names ("missing" when
// it cannot be found or read: a later install changes the hash).
func exeDigest(argv0, cwd string) string {
	path := argv0
	if !strings.ContainsRune(argv0, filepath.Separator) && !strings.ContainsRune(argv0, '/') {
		p, err := exec.LookPath(argv0)
		if err != nil {
			return "missing"
		}
		path = p
	} else if !filepath.IsAbs(path) && cwd != "" {
		path = filepath.Join(cwd, path)
	}
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
