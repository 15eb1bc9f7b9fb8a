package tap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/sessions"
)

// Tapped is one session of the sessions folder, as sonde sessions lists
// it (and its JSON form): sessions.Tapped, which sonde mcp also answers.
type Tapped = sessions.Tapped

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
  HOST      who the host says it is and the protocol the session speaks, from its first
            request (initialize's clientInfo: "claude-code 2.1.197 · 2025-11-25"); until the
            host has sent one, its process name (where the system says it) and pid
  SERVER    the server's command (from the capture's header)
  STARTED   when the tap started
  STATE     live (the tap whose pid is in the file name is running) or ended, with when the
            file last changed; "cut" when the recording has no clean end (the tap was killed)
  SIZE      of the file
  CALLS     the requests the host sent
  ERRORS    those answered with a JSON-RPC error, or that broke the protocol

A file that cannot be read as a capture is listed with the reason. --json prints one JSON
array (id, file, label, command, started, live, ended, tap_pid, host_pid, host_name,
client_name, client_version, protocol, size, calls, errors, late, unknown, duplicate,
clean_end, problem). Nothing is ever deleted except
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
func ListSessions(dir string) ([]Tapped, error) { return sessions.ListTapped(dir) }

// sessionNote is the first note of a tap's recording (sessions.TapNote):
// the session's label, the tap's pid and its host's (the tap's parent),
// with the host's name where the system says it (Linux).
func sessionNote(label string, tapPID, hostPID int) string {
	return sessions.TapNote(label, tapPID, hostPID, hostName(hostPID))
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
	fmt.Fprintln(tw, "ID\tLABEL\tHOST\tSERVER\tSTARTED\tSTATE\tSIZE\tCALLS\tERRORS")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", textfmt.Escape(s.ID), textfmt.Escape(s.Label), textfmt.Escape(hostColumn(s)), server,
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

// hostColumn is who the host is (Tapped.Host), or, before its first
// request, the process that launched the tap ("-": not known).
func hostColumn(s Tapped) string {
	if h := s.Host(); h != "" {
		return h
	}
	if h := hostLabel(s); h != "" {
		return h
	}
	return "-"
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
