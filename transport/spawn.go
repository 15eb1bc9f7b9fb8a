package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
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
	// Hide are secret values (StdioConfig.Hide) the message shows as
	// Redacted: the command or its folder may hold one.
	Hide []string
}

// Error names the command and what went wrong, with the values of Hide
// redacted.
func (e *SpawnError) Error() string {
	return shownArgv([]string{e.message()}, e.Hide)[0]
}

// message is Error before Hide is applied.
func (e *SpawnError) message() string {
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
// to the server by default on goos. Windows adds what its programs need to
// run and find their folders (a Node server started through npx.cmd needs
// PATHEXT, COMSPEC, SYSTEMROOT and APPDATA); its names are case-insensitive
// there, and name must then be upper case.
func allowedEnv(goos, name string) bool {
	switch name {
	case "PATH", "HOME", "USER", "LANG", "TERM", "TMPDIR":
		return true
	}
	if goos == "windows" {
		switch name {
		case "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "TEMP", "TMP",
			"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "USERNAME",
			"PROCESSOR_ARCHITECTURE", "PROGRAMFILES":
			return true
		}
	}
	return strings.HasPrefix(name, "LC_")
}

// BuildEnv returns the server's environment: the allow-listed variables of
// environ, the variables named in pass (when set in environ), then extra
// (KEY=VALUE entries, which win over the others). On Windows, names are
// matched without regard to case, as Windows does ("Path" is PATH).
func BuildEnv(environ []string, pass []string, extra []string) ([]string, error) {
	return buildEnv(runtime.GOOS, environ, pass, extra)
}

// buildEnv is BuildEnv for goos.
func buildEnv(goos string, environ []string, pass []string, extra []string) ([]string, error) {
	key := func(name string) string { return name }
	if goos == "windows" {
		key = strings.ToUpper
	}
	passSet := make(map[string]bool, len(pass))
	for _, p := range pass {
		if p == "" || strings.Contains(p, "=") {
			return nil, fmt.Errorf("--pass-env %q: want a variable name", p)
		}
		passSet[key(p)] = true
	}
	entries := map[string]string{} // by key: the KEY=VALUE entry
	var order []string
	set := func(k, kv string) {
		if _, ok := entries[k]; !ok {
			order = append(order, k)
		}
		entries[k] = kv
	}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		// On Windows, entries such as "=C:=C:\dir" (a drive's current
		// folder) have an empty name: they are never passed.
		if ok && k != "" && (allowedEnv(goos, key(k)) || passSet[key(k)]) {
			set(key(k), kv)
		}
	}
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		// The messages never show the value: it may be a secret (and an
		// entry without "=" may be nothing but a value).
		switch {
		case !ok:
			return nil, fmt.Errorf("--env: an entry has no \"=\": want KEY=VALUE (the entry is not shown: it may be a secret)")
		case k == "":
			return nil, fmt.Errorf("--env =…: the name is empty: want KEY=VALUE")
		case strings.IndexByte(k, 0) >= 0:
			return nil, fmt.Errorf("--env %q: the name holds a NUL byte", k)
		case strings.IndexByte(v, 0) >= 0:
			return nil, fmt.Errorf("--env %s=…: the value holds a NUL byte, which an environment cannot", k)
		}
		set(key(k), kv)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, entries[k])
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
