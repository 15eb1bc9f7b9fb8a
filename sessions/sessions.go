// Package sessions owns the folder sonde tap records into: the name of a
// session's file (its ID: label, start, the tap's pid), creating one,
// listing them, resolving an id prefix named on the command line, and
// whether a session's tap still runs.
package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/paths"
)

// Ext ends the name of every session file; a session's id is its file
// name without it.
const Ext = ".jsonl"

// stamp is the layout of an ID's start (UTC, to the second).
const stamp = "20060102-150405"

// maxLabel bounds a label's length in an ID.
const maxLabel = 64

// ID names a recorded session: LABEL-20060102-150405-PID (the start in
// UTC, the pid of the tap that records it).
type ID struct {
	Label string
	Start time.Time
	PID   int
}

// String is the id as file names carry it (without Ext): the label kept
// to letters, digits, '-', '_' and '.' (any other character replaced by
// '_'), leading dots dropped, at most 64 kept ("session" when nothing is
// left); the start in UTC to the second.
func (id ID) String() string {
	return fmt.Sprintf("%s-%s-%d", CleanLabel(id.Label), id.Start.UTC().Format(stamp), id.PID)
}

// CleanLabel is label as an ID's String writes it.
func CleanLabel(label string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, label)
	clean = strings.TrimLeft(clean, ".") // no hidden file
	if clean == "" {
		clean = "session"
	}
	if len(clean) > maxLabel {
		clean = clean[:maxLabel]
	}
	return clean
}

// FileName is the name of the session's file: String and Ext.
func (id ID) FileName() string { return id.String() + Ext }

// ErrNotID is returned by Parse for a name that is not an ID.
var ErrNotID = errors.New("not a session id (LABEL-20060102-150405-PID)")

// Parse reads an id written by String (an Ext at its end is taken off).
// The label is what precedes the last two fields, as it is.
func Parse(s string) (ID, error) {
	s = strings.TrimSuffix(s, Ext)
	rest, pidText, ok := cutLast(s)
	if !ok || !digits(pidText) {
		return ID{}, fmt.Errorf("%q: %w", s, ErrNotID)
	}
	rest, clock, ok := cutLast(rest)
	if !ok || len(clock) != 6 || !digits(clock) {
		return ID{}, fmt.Errorf("%q: %w", s, ErrNotID)
	}
	label, day, ok := cutLast(rest)
	if !ok || label == "" || len(day) != 8 || !digits(day) {
		return ID{}, fmt.Errorf("%q: %w", s, ErrNotID)
	}
	start, err := time.Parse(stamp, day+"-"+clock)
	if err != nil {
		return ID{}, fmt.Errorf("%q: %w", s, ErrNotID)
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return ID{}, fmt.Errorf("%q: %w", s, ErrNotID)
	}
	return ID{Label: label, Start: start, PID: pid}, nil
}

// cutLast splits s at its last '-'.
func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Dir is the sessions folder (paths.Paths.Sessions: $SONDE_HOME/sessions
// when SONDE_HOME is set).
func Dir() (string, error) {
	p, err := paths.Current()
	if err != nil {
		return "", err
	}
	return p.Sessions, nil
}

// ErrNoDir is returned by Create without a folder.
var ErrNoDir = errors.New("no sessions folder")

// Create creates the file of session id in dir, creating dir (mode 0700)
// when missing: id's FileName, mode 0600, never an existing file. It
// returns the file and its path.
func Create(dir string, id ID) (*os.File, string, error) {
	if dir == "" {
		return nil, "", ErrNoDir
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, id.FileName())
	f, err := capture.Create(path, false)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// Entry is a file of the sessions folder: its name without Ext, and its
// ID when the name is one.
type Entry struct {
	// Name is the file name without Ext (what sonde sessions shows as
	// the id).
	Name string
	// Path is the file's path.
	Path string
	// ID is Name read (Named: it was one).
	ID    ID
	Named bool
	// Running is Live as List read it (one probe a listing).
	Running bool
}

// Live reports whether e's tap still runs (an entry with no ID: never).
func (e Entry) Live() bool { return e.Named && Live(e.ID.PID) }

// List is the session files of dir, those whose tap still runs first
// (Entry.Live), each part sorted by name; a missing dir is none.
func List(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var list []Entry
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), Ext)
		if de.IsDir() || !ok {
			continue
		}
		e := Entry{Name: name, Path: filepath.Join(dir, de.Name())}
		if id, err := Parse(name); err == nil {
			e.ID, e.Named = id, true
		}
		e.Running = e.Live()
		list = append(list, e)
	}
	slices.SortStableFunc(list, func(a, b Entry) int {
		if a.Running != b.Running {
			if a.Running {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return list, nil
}

// AmbiguousError is Resolve's answer for a prefix several sessions begin
// with.
type AmbiguousError struct {
	Prefix string
	Dir    string
	// Names are the sessions it begins, sorted.
	Names []string
}

// Error lists up to five of the sessions.
func (e *AmbiguousError) Error() string {
	hits, more := e.Names, ""
	if len(hits) > 5 {
		more = fmt.Sprintf(" and %d more", len(hits)-5)
		hits = hits[:5]
	}
	return fmt.Sprintf("%q begins %d sessions of %s: %s%s; give more of the id (sonde sessions lists them)", e.Prefix, len(e.Names), e.Dir, strings.Join(hits, ", "), more)
}

// Resolve is the path of the session of dir whose name is prefix (an Ext
// at its end is taken off), or begins with it when only one does (ok
// false: none does). Several are an *AmbiguousError.
func Resolve(dir, prefix string) (path string, ok bool, err error) {
	list, err := List(dir)
	if err != nil {
		return "", false, err
	}
	name := strings.TrimSuffix(prefix, Ext)
	var hits []Entry
	for _, e := range list {
		if e.Name == name {
			return e.Path, true, nil
		}
		if strings.HasPrefix(e.Name, name) {
			hits = append(hits, e)
		}
	}
	switch len(hits) {
	case 0:
		return "", false, nil
	case 1:
		return hits[0].Path, true, nil
	}
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	slices.Sort(names)
	return "", false, &AmbiguousError{Prefix: prefix, Dir: dir, Names: names}
}
