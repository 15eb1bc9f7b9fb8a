package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// ConfigCode is the stable code of a host config file that sonde wrap or
// unwrap did not replace (docs/errors.md). Each one means that nothing was
// written: the file, and its folder, are as they were.
type ConfigCode string

// The codes of a ConfigError.
const (
	// CodeConfigReadOnly: the file is read-only (no write permission for
	// anyone: the user marked it so), or this user may not write it.
	CodeConfigReadOnly ConfigCode = "CONFIG_READ_ONLY"
	// CodeConfigOwner: the new file could not be given the owner and
	// group of the file it replaces (sonde runs as another user, not root).
	CodeConfigOwner ConfigCode = "CONFIG_OWNER"
	// CodeConfigBackup: the backup could not be written whole, or did
	// not read back the same (a full disk).
	CodeConfigBackup ConfigCode = "CONFIG_BACKUP"
	// CodeConfigWrite: the new file could not be written or put in place.
	CodeConfigWrite ConfigCode = "CONFIG_WRITE"
	// CodeConfigChanged: the file changed while sonde was editing it.
	CodeConfigChanged ConfigCode = "CONFIG_CHANGED"
)

// ConfigError is a host config file that sonde wrap or unwrap did not
// replace. It prints as "CODE: PATH: message".
type ConfigError struct {
	Code ConfigCode
	Path string
	Msg  string
	Err  error // the cause, if any
}

// Error is "CODE: PATH: message".
func (e *ConfigError) Error() string { return string(e.Code) + ": " + e.Path + ": " + e.Msg }

// Unwrap is the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is matches a sentinel of the same code: a ConfigError with only a Code.
func (e *ConfigError) Is(target error) bool {
	t, ok := target.(*ConfigError)
	return ok && t.Path == "" && t.Msg == "" && t.Code == e.Code
}

// configFile is a host config file about to be replaced: the path as
// given, the file it names (a symlink followed), its mode and owner.
type configFile struct {
	path, real string
	mode       fs.FileMode
	owner      owner
}

// checkConfig finds the file at path and says whether sonde may replace
// it: not when it is read-only, not writable by this user, or owned by
// someone this user cannot give a file to (verb is the command, for the
// message). It writes nothing.
func checkConfig(path, verb string) (configFile, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return configFile{}, &ConfigError{Code: CodeConfigWrite, Path: path, Msg: cause(err) + "; nothing was written", Err: err}
	}
	st, err := os.Stat(real)
	if err != nil {
		return configFile{}, &ConfigError{Code: CodeConfigWrite, Path: path, Msg: cause(err) + "; nothing was written", Err: err}
	}
	c := configFile{path: path, real: real, mode: st.Mode().Perm(), owner: ownerOf(st)}
	if c.mode&0o222 == 0 {
		return c, &ConfigError{Code: CodeConfigReadOnly, Path: path, Msg: fmt.Sprintf(
			"the file is read-only (mode %04o), so sonde does not replace it; nothing was written. "+
				"If you do want it edited: %s, then run sonde %s again", uint32(c.mode), makeWritable(path), verb)}
	}
	if err := writable(real); err != nil {
		return c, &ConfigError{Code: CodeConfigReadOnly, Path: path, Err: err, Msg: fmt.Sprintf(
			"you may not write the file (%v; mode %04o%s), so sonde does not replace it; nothing was written. "+
				"Run sonde %s as the user who may", err, uint32(c.mode), c.owner.describe(), verb)}
	}
	if err := c.owner.canGive(); err != nil {
		return c, &ConfigError{Code: CodeConfigOwner, Path: path, Err: err, Msg: fmt.Sprintf(
			"%v, so a new file would change the file's owner or group, and the host might no longer read it; nothing was written. "+
				"Run sonde %s as the file's owner, or with sudo", err, verb)}
	}
	return c, nil
}

// makeWritable is the command that makes path writable by its owner.
func makeWritable(path string) string {
	if runtime.GOOS == "windows" {
		return `attrib -R "` + path + `"`
	}
	return "chmod u+w " + shellQuote(path)
}

// cause is err's text without the path an *fs.PathError adds.
func cause(err error) string { return unwrapPathErr(err).Error() }

// writeConfig replaces the file c, whose contents were old, with data, and
// returns the backup's path. In order: the new file is written beside the
// real one (a temporary name, c's mode, owner and group, synced); a backup
// of old is written the same way and put in place under a name that no
// file has (FILE.sonde-backup, or FILE.sonde-backup-TIME; never over a
// backup), then read back and compared; the file is read again, and left
// alone if it changed since it was read; only then is the new file renamed
// over it, at once (a host never reads half of it). A failure at any step
// removes what sonde wrote and leaves the file as it was (a *ConfigError).
func writeConfig(c configFile, old, data []byte) (string, error) {
	tmp, code, err := writeTemp(filepath.Dir(c.real), "."+filepath.Base(c.real)+".sonde-*", data, c)
	if err != nil {
		if code == "" {
			code = CodeConfigWrite
		}
		return "", &ConfigError{Code: code, Path: c.path, Err: err, Msg: "cannot write the new file: " + cause(err) + "; nothing was written"}
	}
	placed := false
	defer func() {
		if !placed {
			os.Remove(tmp)
		}
	}()
	backup, code, err := writeBackup(c, old)
	if err != nil {
		if code == "" {
			code = CodeConfigBackup
		}
		return "", &ConfigError{Code: code, Path: c.path, Err: err, Msg: "cannot write the backup: " + cause(err) + "; nothing was written"}
	}
	now, err := os.ReadFile(c.real)
	if err != nil || !bytes.Equal(now, old) {
		os.Remove(backup)
		return "", &ConfigError{Code: CodeConfigChanged, Path: c.path, Err: err, Msg: "the file changed while sonde was editing it; nothing was written (try again)"}
	}
	if err := os.Rename(tmp, c.real); err != nil {
		os.Remove(backup)
		return "", &ConfigError{Code: CodeConfigWrite, Path: c.path, Err: err, Msg: "cannot put the new file in place: " + cause(err) + "; nothing was written"}
	}
	placed = true
	syncDir(filepath.Dir(c.real))
	return backup, nil
}

// writeBackup writes old beside c.path under a new name, as writeConfig
// says, and returns it. code is CodeConfigOwner when the backup could not
// be given c's owner, else "".
func writeBackup(c configFile, old []byte) (string, ConfigCode, error) {
	dir := filepath.Dir(c.path)
	tmp, code, err := writeTemp(dir, "."+filepath.Base(c.path)+".sonde-backup-*", old, c)
	if err != nil {
		return "", code, err
	}
	defer os.Remove(tmp) // once linked, the backup keeps its own name
	if got, err := os.ReadFile(tmp); err != nil || !bytes.Equal(got, old) {
		return "", "", readBackErr(err)
	}
	name := c.path + ".sonde-backup"
	stamp := time.Now().UTC().Format("20060102-150405")
	for i := 0; ; i++ {
		err := placeNew(tmp, name)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			name = c.path + ".sonde-backup-" + stamp
			if i > 0 {
				name += fmt.Sprintf("-%d", i)
			}
			continue
		}
		if err != nil {
			return "", "", err
		}
		break
	}
	if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, old) {
		os.Remove(name)
		return "", "", readBackErr(err)
	}
	syncDir(dir)
	return name, "", nil
}

// readBackErr is the error of a backup that did not read back as written.
func readBackErr(err error) error {
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	return errors.New("it does not read back as written")
}

// placeNew gives the file tmp the name name, only if no file has it
// (fs.ErrExist then): a hard link, which never replaces a file; where the
// file system has none, a rename after looking that the name is free.
func placeNew(tmp, name string) error {
	err := os.Link(tmp, name)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, err := os.Lstat(name); err == nil {
		return fs.ErrExist
	}
	return os.Rename(tmp, name)
}

// writeTemp writes data to a new file in dir (named by pattern, as
// os.CreateTemp), with c's mode, owner and group, synced to the disk, and
// returns its name; on failure it removes it. code is CodeConfigOwner when
// the owner could not be set, else "".
func writeTemp(dir, pattern string, data []byte, c configFile) (string, ConfigCode, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", "", err
	}
	fail := func(code ConfigCode, err error) (string, ConfigCode, error) {
		f.Close()
		os.Remove(f.Name())
		return "", code, err
	}
	if err := f.Chmod(c.mode); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fail("", err)
	}
	if err := c.owner.give(f); err != nil {
		return fail(CodeConfigOwner, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail("", err)
	}
	if err := f.Sync(); err != nil {
		return fail("", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", "", err
	}
	return f.Name(), "", nil
}

// syncDir flushes a folder's entries (a rename, a new name) to the disk,
// where the system allows it; it is not an error where it does not.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
