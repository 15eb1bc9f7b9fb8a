package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// SpawnReason says why a server could not be started.
type SpawnReason uint8

// The reasons a spawn fails.
const (
	SpawnFailed SpawnReason = iota
	SpawnNotFound
	SpawnPermission
	SpawnBadDir
	SpawnBadConfig
)

// SpawnError reports that the server process could not be started.
type SpawnError struct {
	Argv0  string
	Reason SpawnReason
	Err    error
}

// Error names the command and what went wrong.
func (e *SpawnError) Error() string {
	switch e.Reason {
	case SpawnNotFound:
		return fmt.Sprintf("cannot start %q: executable not found (check the path or PATH)", e.Argv0)
	case SpawnPermission:
		return fmt.Sprintf("cannot start %q: permission denied (is it executable?)", e.Argv0)
	case SpawnBadDir:
		return fmt.Sprintf("cannot start %q: working directory: %v", e.Argv0, e.Err)
	case SpawnBadConfig:
		return fmt.Sprintf("cannot start server: %v", e.Err)
	}
	return fmt.Sprintf("cannot start %q: %v", e.Argv0, e.Err)
}

// Unwrap returns the underlying error.
func (e *SpawnError) Unwrap() error { return e.Err }

func classifySpawn(argv0 string, err error) *SpawnError {
	r := SpawnFailed
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		r = SpawnNotFound
	case errors.Is(err, fs.ErrPermission):
		r = SpawnPermission
	}
	return &SpawnError{Argv0: argv0, Reason: r, Err: err}
}

// allowedEnv reports whether a variable of sonde's own environment is passed
// to the server by default.
func allowedEnv(name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// BuildEnv returns the server's environment: the allow-listed variables of
// environ, the variables named in pass (when set in environ), then extra
// (KEY=VALUE entries, which win over the others).
func BuildEnv(environ []string, pass []string, extra []string) ([]string, error) {
	passSet := make(map[string]bool, len(pass))
	for _, p := range pass {
		if p == "" || strings.Contains(p, "=") {
			return nil, fmt.Errorf("--pass-env %q: want a variable name", p)
		}
		passSet[p] = true
	}
	vals := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" && (allowedEnv(k) || passSet[k]) {
			set(k, v)
		}
	}
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
		set(k, v)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	st, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}
