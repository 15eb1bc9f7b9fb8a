package manager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ApprovalsFile is the name of the file, in the user's state folder
// (paths.Paths.State), of the project servers the user approved to start
// in runs that do not name them (sonde servers approve NAME).
const ApprovalsFile = "approved.json"

// Approved is one server the user approved: the config file and the name
// of its entry, and the Hash of what it ran as then. A change of the entry
// or of its executable gives another hash, which the approval does not
// cover.
type Approved struct {
	File string    `json:"file"`
	Name string    `json:"name"`
	Hash string    `json:"hash"`
	At   time.Time `json:"at"`
}

// Approvals are the approvals kept in one file. The zero value holds none
// and saves nowhere.
type Approvals struct {
	path string
	list []Approved
}

// approvalsDoc is the approvals file.
type approvalsDoc struct {
	Version  int        `json:"version"`
	Approved []Approved `json:"approved"`
}

// LoadApprovals reads the approvals file at path ("" for none). A missing
// file holds no approval; so does a damaged one, and the error says why it
// was not used (it is rewritten at the next approval).
func LoadApprovals(path string) (*Approvals, error) {
	a := &Approvals{path: path}
	if path == "" {
		return a, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("server approvals %s: %w", path, err)
	}
	var doc approvalsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return a, fmt.Errorf("server approvals %s: not valid JSON, none used: %w", path, err)
	}
	for _, r := range doc.Approved {
		if r.File != "" && r.Name != "" && r.Hash != "" {
			a.list = append(a.list, r)
		}
	}
	return a, nil
}

// Of returns the approval of the entry name of file (whatever its hash),
// and whether there is one.
func (a *Approvals) Of(file, name string) (Approved, bool) {
	for _, r := range a.list {
		if r.File == file && r.Name == name {
			return r, true
		}
	}
	return Approved{}, false
}

// Covers reports whether the entry name of file is approved as it is now
// (hash).
func (a *Approvals) Covers(file, name, hash string) bool {
	r, ok := a.Of(file, name)
	return ok && r.Hash == hash
}

// Approve approves the entry name of file under hash (replacing an
// approval of another hash) and saves the file at once (a temporary file
// renamed over it), mode 0600 in a 0700 folder.
func (a *Approvals) Approve(file, name, hash string) error {
	out := []Approved{{File: file, Name: name, Hash: hash, At: time.Now().UTC()}}
	for _, r := range a.list {
		if r.File != file || r.Name != name {
			out = append(out, r)
		}
	}
	a.list = out
	if a.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(approvalsDoc{Version: 1, Approved: a.list}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(a.path, append(b, '\n')); err != nil {
		return fmt.Errorf("server approvals: %w", err)
	}
	return nil
}

// writeAtomic writes b to path at once (a temporary file in its folder
// renamed over it), mode 0600 in a 0700 folder.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
