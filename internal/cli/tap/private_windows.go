//go:build windows

package tap

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID (_WSAIOR(IOC_VENDOR,
// 256)): the pid of the process at the other end of an AF_UNIX socket.
const sioAFUnixGetPeerPID = 0x58000100

// userSID is the SID of the user sonde runs as.
func userSID() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, err
	}
	return tu.User.Sid, nil
}

// checkPrivateDir checks that dir is a folder owned by the user (or by
// the Administrators group or SYSTEM, which own what an elevated user
// makes). Its ACL is what Windows gave it (a folder under
// %LOCALAPPDATA% inherits the user's own); every connection to the
// socket is checked besides (checkPeer).
func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return notPrivate(fmt.Sprintf("the sessions folder %s is not a folder", dir))
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return notPrivate(fmt.Sprintf("the sessions folder %s: cannot read its owner: %v", dir, err))
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return notPrivate(fmt.Sprintf("the sessions folder %s: cannot read its owner: %v", dir, err))
	}
	me, err := userSID()
	if err != nil {
		return err
	}
	if !owner.Equals(me) && !owner.IsWellKnown(windows.WinBuiltinAdministratorsSid) && !owner.IsWellKnown(windows.WinLocalSystemSid) {
		return notPrivate(fmt.Sprintf("the sessions folder %s belongs to %s, not to you (%s): its owner could read the recordings and reach the sessions' sockets; sonde will not use it (remove it, or set SONDE_HOME to a folder of your own)", dir, owner, me))
	}
	return nil
}

// chmodSocket: a Windows socket has the ACL its folder gives it.
func chmodSocket(string) error { return nil }

// checkPeer refuses a connection whose peer runs as another user than
// sonde: the peer's pid (SIO_AF_UNIX_GETPEERPID), its process token's
// user. A process sonde may not open is another user's.
func checkPeer(c net.Conn, who string) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return notPrivate(fmt.Sprintf("%s: not a socket (%T)", who, c))
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return notPrivate(fmt.Sprintf("%s: cannot learn who is at the other end of the session's socket: %v", who, err))
	}
	var pid uint32
	var ierr error
	if err := raw.Control(func(fd uintptr) {
		var n uint32
		ierr = windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0, (*byte)(unsafe.Pointer(&pid)), uint32(unsafe.Sizeof(pid)), &n, nil, 0)
	}); err != nil {
		ierr = err
	}
	if ierr != nil {
		return notPrivate(fmt.Sprintf("%s: cannot learn who is at the other end of the session's socket: %v", who, ierr))
	}
	me, err := userSID()
	if err != nil {
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return peerRefusal(who, fmt.Sprintf("process %d, which sonde may not open (%v)", pid, err), me.String())
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return peerRefusal(who, fmt.Sprintf("process %d, whose user sonde may not read (%v)", pid, err), me.String())
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return peerRefusal(who, fmt.Sprintf("process %d, whose user sonde may not read (%v)", pid, err), me.String())
	}
	if !tu.User.Sid.Equals(me) {
		return peerRefusal(who, tu.User.Sid.String(), me.String())
	}
	return nil
}
