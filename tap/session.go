package tap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
)

// SessionName is the file name of a session recorded by default:
// LABEL-20060102-150405-PID.jsonl (the time in UTC, the tap's pid), with
// every character of the label that is not a letter, a digit, '-', '_' or
// '.' replaced by '_', leading dots dropped, and at most 64 kept
// ("session" when nothing is left).
func SessionName(label string, t time.Time, pid int) string {
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
	if len(clean) > 64 {
		clean = clean[:64]
	}
	return fmt.Sprintf("%s-%s-%d.jsonl", clean, t.UTC().Format("20060102-150405"), pid)
}

// CreateSession creates the file of a new session in dir, creating dir
// (mode 0700) when missing: SessionName, mode 0600, never an existing
// file. It returns the file and its path.
func CreateSession(dir, label string, t time.Time, pid int) (*os.File, string, error) {
	if dir == "" {
		return nil, "", fmt.Errorf("no sessions folder")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, SessionName(label, t, pid))
	f, err := capture.Create(path, false)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}
