//go:build unix

package tap

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// owner is the user and group a host config file belongs to, which the
// files sonde writes in its place (the new file, the backup) get too: a
// file replaced by sudo sonde wrap stays the user's, whom the host runs as.
type owner struct {
	uid, gid int
	ok       bool
}

// ownerOf is the owner of a file sonde read.
func ownerOf(fi fs.FileInfo) owner {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return owner{}
	}
	return owner{uid: int(st.Uid), gid: int(st.Gid), ok: true}
}

// describe is ", owner uid U, gid G", for messages.
func (o owner) describe() string {
	if !o.ok {
		return ""
	}
	return fmt.Sprintf(", owner uid %d, gid %d", o.uid, o.gid)
}

// canGive says why this process could not give a new file to o, if it
// could not: a user other than root gives files only to itself, and only
// to a group it is in.
func (o owner) canGive() error {
	euid := os.Geteuid()
	if !o.ok || euid == 0 {
		return nil
	}
	if o.uid != euid {
		return fmt.Errorf("the file belongs to uid %d and sonde runs as uid %d", o.uid, euid)
	}
	if o.gid == os.Getegid() {
		return nil
	}
	if groups, err := os.Getgroups(); err == nil && slices.Contains(groups, o.gid) {
		return nil
	}
	return fmt.Errorf("the file's group is gid %d, which sonde (uid %d) is not in", o.gid, euid)
}

// give makes f (a file sonde just created) o's, when it is not already.
func (o owner) give(f *os.File) error {
	if !o.ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if now := ownerOf(st); now.uid == o.uid && now.gid == o.gid {
		return nil
	}
	if err := f.Chown(o.uid, o.gid); err != nil {
		return fmt.Errorf("cannot give the new file the owner uid %d, gid %d: %w", o.uid, o.gid, err)
	}
	return nil
}

// writable says why this user may not write the file at path, if not.
func writable(path string) error {
	if err := syscall.Access(path, 2 /* W_OK */); err != nil {
		return err
	}
	return nil
}
