package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/sessions"
)

// CaptureArg resolves a capture named on the command line: a file that
// exists, or a name with a path separator, is taken as it is; otherwise a
// session of the sessions folder whose id (file name without .jsonl) is
// arg, or begins with arg when only one does (sessions.Resolve). Several
// sessions beginning with arg are a usage error that lists them; anything
// else is arg as it is (the caller then says the file is missing).
func CaptureArg(arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil || arg == "" || strings.ContainsAny(arg, `/`+string(filepath.Separator)) {
		return arg, nil
	}
	dir, err := sessions.Dir()
	if err != nil {
		return arg, nil
	}
	path, ok, err := sessions.Resolve(dir, arg)
	var amb *sessions.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return "", Usagef(amb.Error())
	case err != nil || !ok:
		return arg, nil
	}
	return path, nil
}

// BaselinesDir is the folder of the baselines sonde baseline accepts
// (paths.Paths.Baselines: $SONDE_HOME/baselines when SONDE_HOME is set).
func BaselinesDir() (string, error) {
	p, err := paths.Current()
	if err != nil {
		return "", err
	}
	return p.Baselines, nil
}
