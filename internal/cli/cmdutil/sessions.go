package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// SessionExt ends the name of every session file; a session's id is its
// file name without it.
const SessionExt = ".jsonl"

// SessionsDir is the folder of the sessions sonde tap records
// (paths.Paths.Sessions: $SONDE_HOME/sessions when SONDE_HOME is set).
func SessionsDir() (string, error) {
	p, err := paths.Current()
	if err != nil {
		return "", err
	}
	return p.Sessions, nil
}

// CaptureArg resolves a capture named on the command line: a file that
// exists, or a name with a path separator, is taken as it is; otherwise a
// session of the sessions folder whose id (file name without .jsonl) is
// arg, or begins with arg when only one does. Several sessions beginning
// with arg are a usage error that lists them; anything else is arg as it
// is (the caller then says the file is missing).
func CaptureArg(arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil || arg == "" || strings.ContainsAny(arg, `/`+string(filepath.Separator)) {
		return arg, nil
	}
	dir, err := SessionsDir()
	if err != nil {
		return arg, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return arg, nil
	}
	id := strings.TrimSuffix(arg, SessionExt)
	var hits []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, SessionExt) {
			continue
		}
		sid := strings.TrimSuffix(name, SessionExt)
		if sid == id {
			return filepath.Join(dir, name), nil
		}
		if strings.HasPrefix(sid, id) {
			hits = append(hits, sid)
		}
	}
	switch len(hits) {
	case 0:
		return arg, nil
	case 1:
		return filepath.Join(dir, hits[0]+SessionExt), nil
	}
	sort.Strings(hits)
	n, more := len(hits), ""
	if len(hits) > 5 {
		more = fmt.Sprintf(" and %d more", len(hits)-5)
		hits = hits[:5]
	}
	return "", Usagef(fmt.Sprintf("%q begins %d sessions of %s: %s%s; give more of the id (sonde sessions lists them)", arg, n, dir, strings.Join(hits, ", "), more))
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
