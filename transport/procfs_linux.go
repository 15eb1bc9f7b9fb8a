//go:build linux

package transport

import (
	"strconv"
	"syscall"
)

// procFS reads /proc for the group reading (statGroup) and the sweeps of
// Wait: the pids it lists, and small files of each (stat, schedstat) into
// one reused buffer. A walk reads a file of every process on the machine,
// and os.ReadFile costs twice the system calls of this (an fstat, a read
// to see the end, the poller's registration) and two allocations a file.
type procFS struct {
	dir  int    // the /proc folder, open (-1: not)
	buf  []byte // the last file read
	ents []byte // a block of directory entries
}

// openProc opens /proc; Close closes it. ok is false when /proc is not
// there to read.
func openProc() (p *procFS, ok bool) {
	fd, err := syscall.Open("/proc", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	return &procFS{dir: fd, buf: make([]byte, 0, 1024)}, true
}

func (p *procFS) close() { _ = syscall.Close(p.dir) }

// eachPid calls f with every pid /proc lists now (a process that starts
// meanwhile may be missed, as with any read of /proc).
func (p *procFS) eachPid(f func(pid int)) {
	if p.ents == nil {
		p.ents = make([]byte, 8192)
	}
	if _, err := syscall.Seek(p.dir, 0, 0); err != nil {
		return
	}
	for {
		n, err := syscall.ReadDirent(p.dir, p.ents)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		// struct linux_dirent64: ino (8 bytes), off (8), reclen (2),
		// type (1), then the NUL-terminated name.
		for b := p.ents[:n]; len(b) >= 19; {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return
			}
			if pid, ok := pidName(b[19:reclen]); ok {
				f(pid)
			}
			b = b[reclen:]
		}
	}
}

// pidName reads a directory entry's name (NUL-padded) as a pid.
func pidName(name []byte) (int, bool) {
	pid := 0
	for i, c := range name {
		if c == 0 {
			return pid, i > 0
		}
		if c < '0' || c > '9' || i >= 9 {
			return 0, false
		}
		pid = pid*10 + int(c-'0')
	}
	return pid, len(name) > 0 && pid > 0
}

// read reads the small file name (relative to /proc, as "123/stat") whole
// into the buffer, valid until the next read.
func (p *procFS) read(name string) ([]byte, error) {
	fd, err := syscall.Openat(p.dir, name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	p.buf = p.buf[:0]
	for {
		if len(p.buf) == cap(p.buf) {
			p.buf = append(p.buf, make([]byte, cap(p.buf))...)[:len(p.buf)]
		}
		room := cap(p.buf) - len(p.buf)
		n, err := syscall.Read(fd, p.buf[len(p.buf):cap(p.buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		p.buf = p.buf[:len(p.buf)+n]
		// A one-line file of /proc comes whole in one read: a short read
		// that ends the line is its end (no second read to see it).
		if n == 0 || (n < room && p.buf[len(p.buf)-1] == '\n') {
			return p.buf, nil
		}
	}
}

// stat reads /proc/PID/stat.
func (p *procFS) stat(pid int) ([]byte, error) {
	return p.read(strconv.Itoa(pid) + "/stat")
}
