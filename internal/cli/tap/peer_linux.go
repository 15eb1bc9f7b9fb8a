package tap

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of c, from
// SO_PEERCRED (its credentials when it connected or listened).
func peerUID(c net.Conn) (uid int, ok bool, err error) {
	err = rawFD(c, func(fd int) error {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err == nil {
			uid = int(cred.Uid)
		}
		return err
	})
	return uid, err == nil, err
}
