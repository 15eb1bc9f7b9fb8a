//go:build windows

package tap

import (
	"fmt"
	"net"
	"os"
	"runtime"
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

// trusted reports whether sid may have access to the sessions folder:
// the user, SYSTEM, the Administrators group (which can read any file
// anyway) and CREATOR OWNER (which stands for the user in what is made
// in it).
func trusted(sid, me *windows.SID) bool {
	return sid.Equals(me) || sid.IsWellKnown(windows.WinLocalSystemSid) || sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) || sid.IsWellKnown(windows.WinCreatorOwnerSid)
}

// openRights are the rights an ACE may not give anyone else: to list or
// read, to add files (a socket is one), to change the ACL or the owner.
const openRights = windows.FILE_READ_DATA | windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA |
	windows.WRITE_DAC | windows.WRITE_OWNER | windows.GENERIC_ALL | windows.GENERIC_READ | windows.GENERIC_WRITE

// checkPrivateDir checks that dir is a folder owned by the user (or by
// the Administrators group or SYSTEM, which own what an elevated user
// makes) whose ACL gives no one else the right to list, read or add to
// it (openRights); inherit-only entries are for what is made in it, and
// are checked there.
func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return notPrivate(fmt.Sprintf("the sessions folder %s is not a folder", dir))
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return notPrivate(fmt.Sprintf("the sessions folder %s: cannot read its owner and ACL: %v", dir, err))
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
	fix := fmt.Sprintf(`icacls "%s" /inheritance:r /grant:r "%%USERNAME%%:(OI)(CI)F"`, dir)
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		// No DACL: everyone has every right.
		return notPrivate(fmt.Sprintf("the sessions folder %s is open to other users (it has no ACL): sonde will not use it (run: %s)", dir, fix))
	}
	for i := 0; i < int(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, uint32(i), &ace); err != nil {
			return notPrivate(fmt.Sprintf("the sessions folder %s: cannot read its ACL: %v", dir, err))
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if ace.Mask&openRights != 0 && !trusted(sid, me) {
			return notPrivate(fmt.Sprintf("the sessions folder %s is open to other users (its ACL gives %s access 0x%x): they could read the recordings and send requests through a session's socket, which the server answers with its credentials; sonde will not use it (run: %s)", dir, sid, uint32(ace.Mask), fix))
		}
	}
	return nil
}

// makePrivate gives a folder sonde made an ACL of the user's alone (full
// control, inherited by what is made in it; nothing inherited from its
// parent): what mode 0700 is on Unix.
func makePrivate(dir string) error {
	me, err := userSID()
	if err != nil {
		return err
	}
	var pin runtime.Pinner // a TRUSTEE holds a pointer to the SID
	pin.Pin(me)
	defer pin.Unpin()
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_USER,
			TrusteeValue: windows.TrusteeValueFromSID(me),
		},
	}}, nil)
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
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
