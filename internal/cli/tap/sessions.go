package tap

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
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/sessions"
)

// Tapped is one session of the sessions folder, as sonde sessions lists
// it (and its JSON form).
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
	Size     int64  `json:"size"`
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
	scanned int64
	noted   bool
}

// SessionsOptions are the flags of sonde sessions.
type SessionsOptions struct {
	JSON bool
	// Dir overrides the sessions folder (tests); "" is sessions.Dir.
	Dir string
}

// PruneOptions are the flags of sonde sessions prune.
type PruneOptions struct {
	OlderThan string
	DryRun    bool
	Dir       string
}

// NewCmdSessions is `sonde sessions` and `sonde sessions prune`.
func NewCmdSessions(env *cmdutil.Env) *cobra.Command {
	var o SessionsOptions
	cmd := &cobra.Command{
		Use:   "sessions [--json]",
		Short: "List the sessions sonde tap recorded, live ones first",
		Long: `List the sessions of the sessions folder, where sonde tap records (see sonde tap --help:
$SONDE_HOME/sessions when SONDE_HOME is set): live ones first, then the newest first.

  ID        the file name without .jsonl; sonde replay ID opens it (or the start of an id,
            when only one session begins so)
  LABEL     the tap's --label (the server's name, when sonde wrap set it up)
  SERVER    the server's command (from the capture's header)
  STARTED   when the tap started
  STATE     live (the tap whose pid is in the file name is running) or ended, with when the
            file last changed; "cut" when the recording has no clean end (the tap was killed)
  SIZE      of the file
  CALLS     the requests the host sent
  ERRORS    those answered with a JSON-RPC error, or that broke the protocol

A file that cannot be read as a capture is listed with the reason. --json prints one JSON
array (id, file, label, command, started, live, ended, tap_pid, host_pid, host_name, size,
calls, errors, late, unknown, duplicate, clean_end, problem). Nothing is ever deleted except
by sonde sessions prune.

Exit status: 0; 2 for a usage error or a sessions folder that cannot be read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunSessions(env, &o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "machine-readable output")
	cmd.AddCommand(newCmdPrune(env))
	return cmd
}

func newCmdPrune(env *cmdutil.Env) *cobra.Command {
	var o PruneOptions
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION [--dry-run]",
		Short: "Delete the sessions that ended more than DURATION ago",
		Long: `Delete the session files of the sessions folder that ended (last changed) more than
DURATION ago: 90m, 36h, 7d (d is 24 hours). Only files named as sonde tap names them
(LABEL-TIME-PID.jsonl) are considered, and a live session (its tap is running) is never
deleted, whatever its age. Without --older-than nothing is deleted. --dry-run lists what
would be deleted and deletes nothing.

  sonde sessions prune --older-than 30d --dry-run

Exit status: 0; 2 for a usage error, or when a file could not be deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunPrune(env, &o)
		},
	}
	cmd.Flags().StringVar(&o.OlderThan, "older-than", "", "delete the sessions that ended more than `DURATION` ago (90m, 36h, 7d)")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return cmd
}

// parseAge reads a duration of time.ParseDuration, or a number of days
// ("7d", "1.5d"); it must be positive.
func parseAge(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || f > 1e5 {
			return 0, fmt.Errorf("--older-than %q: want a duration such as 90m, 36h or 7d", s)
		}
		d = time.Duration(f * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("--older-than %q: want a duration such as 90m, 36h or 7d", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("--older-than %q: want a positive duration", s)
	}
	return d, nil
}

func sessionsDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	d, err := sessions.Dir()
	if err != nil {
		return "", cmdutil.Usagef("no sessions folder: " + err.Error())
	}
	return d, nil
}

// ListSessions reads the sessions of dir: live first, then newest first.
// A missing folder has none.
func ListSessions(dir string) ([]Tapped, error) { return listSessions(dir, nil) }

// sessionCache keeps what was read of each file, by path, for a list read
// again and again (sonde watch's): a file whose size and modification time
// did not change is not read again (only whether its tap still runs is),
// and of one that grew only what was added is read.
type sessionCache map[string]Tapped

// listSessions is ListSessions, through cache when it is not nil.
func listSessions(dir string, cache sessionCache) ([]Tapped, error) {
	entries, err := sessions.List(dir)
	if err != nil {
		return nil, err
	}
	var out []Tapped
	for _, e := range entries {
		path := e.Path
		if cache == nil {
			out = append(out, readSession(path, e.Running))
			continue
		}
		s, ok := cache[path]
		st, err := os.Stat(path)
		switch {
		case !ok || err != nil:
			s = readSession(path, e.Running)
		case st.Size() != s.Size || !st.ModTime().Equal(s.mtime):
			// A live recording grows: read what was added, not the
			// whole file again.
			if !s.readMore(st.Size(), st.ModTime(), e.Running) {
				s = readSession(path, e.Running)
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
	// Not sessions.List's order: live here also means no end record, and
	// the rest is newest first.
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

// readSession reads what sonde sessions shows of one file: its name, its
// header, and a quick pass over its records that decodes only the short
// ones (requests, notes, the end), skipping frames unread. running is
// whether its tap still runs (sessions.List's probe, or tapRuns).
func readSession(path string, running bool) Tapped {
	s := Tapped{File: path, ID: strings.TrimSuffix(filepath.Base(path), sessions.Ext)}
	if id, err := sessions.Parse(s.ID); err == nil {
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
// was last read (from s.scanned), as readSession would have. It reports
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

// tapNote is the tap's first note (sessionNote): its label as given, and
// the host's pid and, when it was known, name.
var tapNote = regexp.MustCompile(`^sonde tap: session (".*"), tap pid \d+, host pid (\d+)(?: \((.*)\))?$`)

// sessionNote is the first note of a tap's recording: the session's label,
// the tap's pid and its host's (the tap's parent), with the host's name
// where the system says it (Linux).
func sessionNote(label string, tapPID, hostPID int) string {
	note := fmt.Sprintf("sonde tap: session %q, tap pid %d, host pid %d", label, tapPID, hostPID)
	if name := hostName(hostPID); name != "" {
		note += " (" + name + ")"
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
				// A frame's raw text is a JSON string: its quotes are
				// escaped, so the verdict member cannot be found inside it.
				switch {
				case bytes.Contains(line, []byte(`,"verdict":"late"`)):
					s.Late++
				case bytes.Contains(line, []byte(`,"verdict":"unknown"`)):
					s.Unknown++
				case bytes.Contains(line, []byte(`,"verdict":"duplicate"`)):
					s.Duplicate++
				}
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

// RunSessions is sonde sessions.
func RunSessions(env *cmdutil.Env, o *SessionsOptions) error {
	dir, err := sessionsDir(o.Dir)
	if err != nil {
		return err
	}
	list, err := ListSessions(dir)
	if err != nil {
		return cmdutil.Usagef("sessions folder " + dir + ": " + unwrapPathErr(err).Error())
	}
	if o.JSON {
		if list == nil {
			list = []Tapped{}
		}
		cmdutil.WriteJSON(env.Out, list)
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(env.Out, "No sessions in %s.\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(env.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tSERVER\tSTARTED\tSTATE\tSIZE\tCALLS\tERRORS")
	for _, s := range list {
		server := strings.Join(s.Command, " ")
		if s.URL != "" {
			server = s.URL
		}
		if s.Problem != "" {
			server = "(" + s.Problem + ")"
		}
		server = textfmt.Escape(server)
		if r := []rune(server); len(r) > 60 {
			server = string(r[:59]) + "…"
		}
		state := "live"
		if !s.Live {
			state = "ended"
			if s.Ended != nil {
				state += " " + s.Ended.Local().Format("2006-01-02 15:04")
			}
			if !s.CleanEnd && s.Problem == "" {
				state += " (cut)"
			}
		}
		started := "?"
		if !s.Started.IsZero() {
			started = s.Started.Local().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", textfmt.Escape(s.ID), textfmt.Escape(s.Label), server,
			started, state, textfmt.Size(int(s.Size)), s.Calls, s.Errors)
	}
	_ = tw.Flush()
	fmt.Fprintf(env.Out, "\n%s in %s; sonde replay ID opens one.\n", sessionsCount(len(list)), dir)
	return nil
}

// RunPrune is sonde sessions prune.
func RunPrune(env *cmdutil.Env, o *PruneOptions) error {
	if o.OlderThan == "" {
		return cmdutil.Usagef("sessions prune needs --older-than DURATION (nothing is deleted by default)")
	}
	age, err := parseAge(o.OlderThan)
	if err != nil {
		return cmdutil.Usagef(err.Error())
	}
	dir, err := sessionsDir(o.Dir)
	if err != nil {
		return err
	}
	list, err := ListSessions(dir)
	if err != nil {
		return cmdutil.Usagef("sessions folder " + dir + ": " + unwrapPathErr(err).Error())
	}
	cut := time.Now().Add(-age)
	var n int
	var freed int64
	failed := false
	for _, s := range list {
		if _, err := sessions.Parse(s.ID); err != nil || s.Live || s.Ended == nil || !s.Ended.Before(cut) {
			continue
		}
		verb := "deleted"
		if o.DryRun {
			verb = "would delete"
		} else if err := os.Remove(s.File); err != nil {
			fmt.Fprintf(env.Err, "sonde: %v\n", err)
			failed = true
			continue
		} else {
			os.Remove(socketPath(s.File)) // left by a tap that was killed
		}
		n++
		freed += s.Size
		fmt.Fprintf(env.Out, "%s %s (ended %s, %s)\n", verb, textfmt.Escape(s.ID), s.Ended.Local().Format("2006-01-02 15:04"), textfmt.Size(int(s.Size)))
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(env.Out, "Dry run: %s (%s) would be deleted; nothing was.\n", sessionsCount(n), textfmt.Size(int(freed)))
	default:
		fmt.Fprintf(env.Out, "%s deleted (%s).\n", sessionsCount(n), textfmt.Size(int(freed)))
	}
	if failed {
		return &cmdutil.ExitStatus{Code: cmdutil.ExitUsage, Msg: "some sessions could not be deleted"}
	}
	return nil
}

func sessionsCount(n int) string {
	if n == 1 {
		return "1 session"
	}
	return fmt.Sprintf("%d sessions", n)
}

// tapRuns reports whether the tap that records the session file path
// still runs (its name read as a sessions.ID; a name that is not one:
// no).
func tapRuns(path string) bool {
	id, err := sessions.Parse(strings.TrimSuffix(filepath.Base(path), sessions.Ext))
	return err == nil && sessions.Live(id.PID)
}
