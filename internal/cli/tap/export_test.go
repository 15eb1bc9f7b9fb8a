package tap

import (
	"io"

	"github.com/sonde-mcp/sonde/sessions"
)

// FollowSession is followSession (without an export) for the tests of the
// watch UI's source.
func FollowSession(path string, pid int) (*followSource, error) { return followSession(path, pid, nil) }

// ListSessionsCached is the watch list's read of the sessions folder,
// through a cache kept between calls (nil: none).
func ListSessionsCached(dir string, cache sessions.TappedCache) ([]Tapped, error) {
	return sessions.ListTappedCached(dir, cache)
}

// CheckConfig is checkConfig's verdict on the file at path, for sonde wrap.
func CheckConfig(path string) error {
	_, err := checkConfig(path, "wrap")
	return err
}

// ServeControl serves a session's socket at path for a tap with neither
// fault rules nor an injector (every request is answered CodeNoInject).
func ServeControl(path string, errw io.Writer) func() { return serveInjector(&control{}, path, errw) }
