package tap

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/sonde-mcp/sonde/client"
)

// CodeNotPrivate is the stable code of a refusal to use a sessions
// folder, or to talk over a session's socket, that is not the user's
// alone: the folder is open to other users or belongs to someone else,
// or the process at the other end of the socket runs as another user.
// Recordings hold what the server answered, and the socket takes requests
// the server answers with its own credentials.
const CodeNotPrivate client.Code = "MCP_NOT_PRIVATE"

// ErrNotPrivate matches a CodeNotPrivate error with errors.Is.
var ErrNotPrivate = &client.Error{Code: CodeNotPrivate}

// notPrivate is a CodeNotPrivate error with msg.
func notPrivate(msg string) error {
	return &client.Error{Code: CodeNotPrivate, Message: msg, Err: ErrNotPrivate}
}

// privateDir makes the sessions folder dir when it is missing (mode
// 0700, whatever the umask) and checks that it is the user's alone: a
// folder, owned by the user, with no access for group or others
// (checkPrivateDir). A folder the user made is never changed: the error
// says what to run.
func privateDir(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		// MkdirAll's mode is cut by the umask, never widened: 0700 or
		// tighter. Set it exactly (on Windows: an ACL of the user's
		// alone), so that a umask of 0777 does not leave a folder the
		// user cannot use either.
		if err := makePrivate(dir); err != nil {
			return err
		}
	}
	return checkPrivateDir(dir)
}

// listenPrivate listens on the unix socket path (in a folder privateDir
// checked, which nobody else can enter, so the socket's mode before the
// chmod matters to no one) and sets its mode to 0600 whatever the umask.
func listenPrivate(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := chmodSocket(path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// peerRefusal is the error of a connection whose peer is not the user,
// for the message of the side that refuses it.
func peerRefusal(who string, peer, self string) error {
	return notPrivate(fmt.Sprintf("%s: the other end of the session's socket runs as %s, not as %s who runs sonde: refused", who, peer, self))
}
