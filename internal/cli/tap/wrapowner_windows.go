package tap

import (
	"io/fs"
	"os"
)

// owner is a file's owner where sonde keeps it; on Windows a new file
// gets its folder's permissions, and sonde sets nothing.
type owner struct{}

func ownerOf(fs.FileInfo) owner   { return owner{} }
func (owner) describe() string    { return "" }
func (owner) canGive() error      { return nil }
func (owner) give(*os.File) error { return nil }
func writable(string) error       { return nil }
