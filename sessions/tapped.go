package sessions

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/jsonrpc"
)

// Tapped is one session of the sessions folder, as sonde sessions lists
// it (and its JSON form, which sonde mcp's sessions_list also answers).
type Tapped struct {
	// ID is the file name without .jsonl: what sonde replay takes.
	ID   string `json:"id"`
	File string `json:"file"`
	// Label, Started and TapPID come from the file name
	// (LABEL-TIME-PID.jsonl), Started from the header when it can be read.
	Label   string    `json:"label"`
	Command []string  `json:"command,omitempty"`
	URL     string    `json:"url,omitempty"`
	Started time.Time `json:"started"`
	// Live: the tap that records it is running (its pid, from the file
	// name, is a running sonde tap, and the file has no end record).
	Live bool `json:"live"`
	// Ended is the file's last change, for a session that is not live.
	Ended   *time.Time `json:"ended,omitempty"`
	TapPID  int        `json:"tap_pid,omitempty"`
	HostPID int        `json:"host_pid,omitempty"`
	// HostName is the host's process name, when the tap could read it.
	HostName string `json:"host_name,omitempty"`
	// ClientName and ClientVersion are the clientInfo the host gave in its
	// first request (initialize, or a modern request's _meta); Protocol is
	// the protocol version the session speaks (initialize's answer, else
	// what the host asked for). "" until the host said.
	ClientName    string `json:"client_name,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
	Protocol      string `json:"protocol,omitempty"`
	Size          int64  `json:"size"`
	// Calls are the requests the host sent (not those sonde injected);
	// Errors those answered with an error (or breaking the protocol).
	Calls  int `json:"calls"`
	Errors int `json:"errors"`
	// Late, Unknown and Duplicate count the answers with those verdicts
	// (from either side).
	Late      int `json:"late"`
	Unknown   int `json:"unknown"`
	Duplicate int `json:"duplicate"`
	// CleanEnd: the recording ended with its end record (a tap that was
	// killed leaves none).
	CleanEnd bool `json:"clean_end"`
	// Problem says why the file could not be read as a capture.
	Problem string `json:"problem,omitempty"`

	mtime time.Time
	// scanned is how far the file was read (whole lines), noted whether its
	// first note was: what reading more of a growing file starts from.
	scanned  int64
	noted    bool
	hostSeen bool // the host's first request was read (hostFrame)
}

// ListTapped reads the sessions of dir: live first, then newest first.
// A missing folder has none.
func ListTapped(dir string) ([]Tapped, error) { return ListTappedCached(dir, nil) }

// A TappedCache keeps what was read of each file, by path, for a list read
// again and again (sonde watch's): a file whose size and modification time
// did not change is not read again (only whether its tap still runs is),
// and of one that grew only what was added is read.
type TappedCache map[string]Tapped

// ListTappedCached is ListTapped, through cache when it is not nil.
func ListTappedCached(dir string, cache TappedCache) ([]Tapped, error) {
	entries, err := List(dir)
	if err != nil {
		return nil, err
	}
	var out []Tapped
	for _, e := range entries {
		path := e.Path
		if cache == nil {
			out = append(out, ReadTapped(path, e.Running))
			continue
		}
		s, ok := cache[path]
		st, err := os.Stat(path)
		switch {
		case !ok || err != nil:
			s = ReadTapped(path, e.Running)
		case st.Size() != s.Size || !st.ModTime().Equal(s.mtime):
			// A live recording grows: read what was added, not the
			// whole file again.
			if !s.readMore(st.Size(), st.ModTime(), e.Running) {
				s = ReadTapped(path, e.Running)
			}
		default:
			s.settle(e.Running) // its tap may have ended
		}
		cache[path] = s
		out = append(out, s)
	}
	if cache != nil && len(cache) > 2*len(out)+64 {
		clear(cache) // files deleted: start over
	}
	// Not List's order: live here also means no end record, and the rest
	// is newest first.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Live != out[j].Live {
			return out[i].Live
		}
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// ReadTapped reads what sonde sessions shows of one file: its name, its
// header, and a quick pass over its records that decodes only the short
// ones (requests, notes, the end), skipping frames unread. running is
// whether its tap still runs (List's probe, or Live of its pid).
func ReadTapped(path string, running bool) Tapped {
	s := Tapped{File: path, ID: strings.TrimSuffix(filepath.Base(path), Ext)}
	if id, err := Parse(s.ID); err == nil {
		s.Label, s.Started, s.TapPID = id.Label, id.Start, id.PID
	} else {
		s.Label = s.ID
	}
	st, err := os.Stat(path)
	if err == nil {
		s.Size, s.mtime = st.Size(), st.ModTime()
	}
	f, err := os.Open(path)
	if err != nil {
		s.Problem = err.Error()
	} else {
		s.scan(f)
		f.Close()
	}
	s.settle(running)
	return s
}

// settle says whether the session is live (its tap runs and its recording
// has no end) and, if not, when it ended.
func (s *Tapped) settle(running bool) {
	s.Live, s.Ended = running && !s.CleanEnd, nil
	if !s.Live && !s.mtime.IsZero() {
		t := s.mtime
		s.Ended = &t
	}
}

// readMore counts the records written to a growing recording since it
// was last read (from s.scanned), as ReadTapped would have. It reports
// false when that cannot be done (the file was replaced, or never read as
// a capture): read it whole then.
func (s *Tapped) readMore(size int64, mtime time.Time, running bool) bool {
	if s.Problem != "" || s.CleanEnd || s.scanned == 0 || size < s.Size {
		return false
	}
	f, err := os.Open(s.File)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(s.scanned, io.SeekStart); err != nil {
		return false
	}
	s.scanRecords(bufio.NewReaderSize(f, 64<<10))
	s.Size, s.mtime = size, mtime
	s.settle(running)
	return true
}

// tapNote is the tap's first note (TapNote): its label as given, and the
// host's pid and, when it was known, name.
var tapNote = regexp.MustCompile(`^sonde tap: session (".*"), tap pid \d+, host pid (\d+)(?: \((.*)\))?$`)

// TapNote is the first note of a tap's recording, which ReadTapped reads
// back: the session's label, the tap's pid and its host's (the tap's
// parent), with the host's name when it is known ("": not).
func TapNote(label string, tapPID, hostPID int, hostName string) string {
	note := fmt.Sprintf("sonde tap: session %q, tap pid %d, host pid %d", label, tapPID, hostPID)
	if hostName != "" {
		note += " (" + hostName + ")"
	}
	return note
}

// scan reads the header and counts the records.
func (s *Tapped) scan(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	line, long, n, err := readShortLine(br)
	if err != nil && len(line) == 0 {
		s.Problem = "empty: nothing recorded yet"
		return
	}
	var h capture.Header
	if long || json.Unmarshal(line, &h) != nil || h.Type != capture.TypeHeader || h.Format != capture.Format {
		s.Problem = "not a capture"
		return
	}
	s.Command, s.URL = h.Command, h.URL
	if !h.Start.IsZero() {
		s.Started = h.Start
	}
	if err == nil {
		s.scanned = n
		s.scanRecords(br)
	}
}

// scanRecords counts the records of br, which starts at s.scanned in the
// file; only whole lines count (a line still being written is counted once
// it is whole), and s.scanned moves past each.
func (s *Tapped) scanRecords(br *bufio.Reader) {
	for {
		line, long, n, err := readShortLine(br)
		if err != nil {
			return
		}
		s.scanned += n
		if len(line) > 0 && !long && bytes.HasPrefix(line, []byte(`{"type":"`)) {
			s.count(line)
		}
	}
}

// count counts one whole record line.
func (s *Tapped) count(line []byte) {
	var rec struct {
		Type, Dir, State, Note string
		ID                     jsonrpc.ID
	}
	switch {
	case bytes.HasPrefix(line, []byte(`{"type":"request"`)):
		if json.Unmarshal(line, &rec) == nil && rec.Dir == capture.DirOut && !client.Injected(rec.ID) {
			switch rec.State {
			case "sent":
				s.Calls++
			case "error", "protocol":
				s.Errors++
			}
		}
	case bytes.HasPrefix(line, []byte(`{"type":"frame"`)):
		// A frame's raw text is a JSON string: its quotes are escaped, so
		// the verdict member cannot be found inside it.
		s.hostFrame(line)
		switch {
		case bytes.Contains(line, []byte(`,"verdict":"late"`)):
			s.Late++
		case bytes.Contains(line, []byte(`,"verdict":"unknown"`)):
			s.Unknown++
		case bytes.Contains(line, []byte(`,"verdict":"duplicate"`)):
			s.Duplicate++
		}
	case bytes.HasPrefix(line, []byte(`{"type":"session"`)):
		s.sessionRecord(line)
	case bytes.HasPrefix(line, []byte(`{"type":"end"`)):
		s.CleanEnd = true
	case bytes.HasPrefix(line, []byte(`{"type":"note"`)) && !s.noted:
		s.noted = true
		if json.Unmarshal(line, &rec) == nil {
			if m := tapNote.FindStringSubmatch(rec.Note); m != nil {
				if l, err := strconv.Unquote(m[1]); err == nil && l != "" {
					s.Label = l
				}
				s.HostPID, _ = strconv.Atoi(m[2])
				s.HostName = m[3]
			}
		}
	}
}

// readShortLine reads one line; a line longer than the reader's buffer is
// skipped (long true, no text returned). The line has no '\n'; at the end
// of the file err is io.EOF (with what was left, a line not yet whole). n
// is how many bytes were read.
func readShortLine(br *bufio.Reader) (line []byte, long bool, n int64, err error) {
	line, err = br.ReadSlice('\n')
	n = int64(len(line))
	if errors.Is(err, bufio.ErrBufferFull) {
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = br.ReadSlice('\n')
			n += int64(len(line))
		}
		return nil, true, n, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), false, n, err
}
