//go:build unix

package tap

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// checkPrivateDir checks that dir is a folder owned by the user, with no
// access for group or others.
func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return notPrivate(fmt.Sprintf("the sessions folder %s is not a folder", dir))
	}
	uid := os.Geteuid()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return notPrivate(fmt.Sprintf("the sessions folder %s belongs to uid %d, not to you (uid %d): its owner could read the recordings and reach the sessions' sockets; sonde will not use it (remove it, or set SONDE_HOME to a folder of your own)", dir, st.Uid, uid))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return notPrivate(fmt.Sprintf("the sessions folder %s is open to other users (mode %04o): they could read the recordings and send requests through a session's socket, which the server answers with its credentials; sonde will not use it (run: chmod 700 %s)", dir, perm, dir))
	}
	return nil
}

// makePrivate sets a folder sonde made to mode 0700.
func makePrivate(dir string) error { return os.Chmod(dir, 0o700) }

// chmodSocket sets a unix socket's mode to 0600.
func chmodSocket(path string) error { return os.Chmod(path, 0o600) }

// checkPeer refuses a connection whose peer runs as another user than
// sonde (where the OS says: peerUID); who names the side in the message.
func checkPeer(c net.Conn, who string) error {
	uid, ok, err := peerUID(c)
	if err != nil {
		return notPrivate(fmt.Sprintf("%s: cannot learn who is at the other end of the session's socket: %v", who, err))
	}
	if self := os.Geteuid(); ok && uid != self {
		return peerRefusal(who, "uid "+strconv.Itoa(uid), "uid "+strconv.Itoa(self))
	}
	return nil
}

// rawFD runs f on the file descriptor of a unix socket connection.
func rawFD(c net.Conn, f func(fd int) error) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return fmt.Errorf("not a socket (%T)", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
