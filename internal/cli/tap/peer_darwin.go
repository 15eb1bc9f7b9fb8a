package tap

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of c, from
// LOCAL_PEERCRED (what getpeereid reads).
func peerUID(c net.Conn) (uid int, ok bool, err error) {
	err = rawFD(c, func(fd int) error {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err == nil {
			uid = int(cred.Uid)
		}
		return err
	})
	return uid, err == nil, err
}
