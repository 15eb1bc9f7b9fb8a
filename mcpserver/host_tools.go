package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/sessions"
)

// HostFuncs are what the command families know that mcpserver may not
// import: sonde doctor's checklist, sonde sessions' listing of the tap's
// sessions folder and sonde inject's way into a live tapped session. The
// command line (internal/cli/mcp.go) fills them in; a nil one makes its
// tool answer that this sonde mcp cannot do it.
type HostFuncs struct {
	// Doctor runs sonde doctor's checklist on every configured server
	// (server "": all) or the one named, approving nothing by naming it.
	Doctor func(ctx context.Context, server string) (*DoctorResult, error)
	// Tapped lists the sessions of the tap's sessions folder dir ("": the
	// user's), as sonde sessions --json does: live first, then newest.
	Tapped func(dir string) ([]TappedSession, error)
	// Inject sends one request into the live tapped session recorded at
	// path, as sonde inject does, waiting at most timeout: the answer's
	// result, or an error (a *client.Error with the server's JSON-RPC
	// error for an error answer).
	Inject func(ctx context.Context, path, method string, params json.RawMessage, timeout time.Duration) (json.RawMessage, error)
	// SessionsDir is the tap's sessions folder ("": the user's,
	// $SONDE_HOME/sessions when SONDE_HOME is set).
	SessionsDir string
}

// ErrNoHostFunc is the error of a host tool whose HostFuncs entry is nil.
var ErrNoHostFunc = errors.New("not available in this sonde mcp")

// DoctorStep is one check of one server: sonde doctor --json's steps.
type DoctorStep struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	MS     float64 `json:"ms"`
	Detail string  `json:"detail"`
	Hint   string  `json:"hint,omitempty"`
}

// DoctorServer is one server's checklist, as sonde doctor --json prints
// it: the steps in order, stopping at the first that failed.
type DoctorServer struct {
	Server      string       `json:"server"`
	Host        string       `json:"host"`
	Scope       string       `json:"scope"`
	File        string       `json:"file"`
	Transport   string       `json:"transport"`
	Disabled    bool         `json:"disabled,omitempty"`
	NotApproved bool         `json:"not_approved,omitempty"`
	Why         string       `json:"why,omitempty"`
	Approve     string       `json:"approve,omitempty"`
	OK          bool         `json:"ok"`
	Failed      string       `json:"failed,omitempty"`
	MS          float64      `json:"ms"`
	Steps       []DoctorStep `json:"steps"`
}

// DoctorFile is a config file that could not be read: its servers were
// not checked.
type DoctorFile struct {
	File    string `json:"file"`
	OK      bool   `json:"ok"`
	Problem string `json:"problem"`
}

// DoctorResult is the doctor tool's answer.
type DoctorResult struct {
	Servers []DoctorServer `json:"servers"`
	Files   []DoctorFile   `json:"files"`
}

// clean escapes what came from a config file or a server's output (a
// step's detail quotes stderr and frames).
func (r *DoctorResult) clean() {
	if r.Servers == nil {
		r.Servers = []DoctorServer{}
	}
	if r.Files == nil {
		r.Files = []DoctorFile{}
	}
	for i := range r.Servers {
		d := &r.Servers[i]
		d.Server, d.File, d.Why, d.Approve = textfmt.Escape(d.Server), textfmt.Escape(d.File), textfmt.Escape(d.Why), textfmt.Escape(d.Approve)
		if d.Steps == nil {
			d.Steps = []DoctorStep{}
		}
		for j := range d.Steps {
			st := &d.Steps[j]
			st.Detail, _ = serverText(nil, []byte(st.Detail), maxDetail)
			st.Hint = textfmt.Escape(st.Hint)
		}
	}
	for i := range r.Files {
		r.Files[i].File, r.Files[i].Problem = textfmt.Escape(r.Files[i].File), textfmt.Escape(r.Files[i].Problem)
	}
}

// maxDetail bounds a doctor step's detail (it may quote a server's
// stderr).
const maxDetail = 8 << 10

// Summary is the short text beside the structured answer: the result of
// each server, and the first failure's cause and hint.
func (r *DoctorResult) Summary() string {
	var parts []string
	var why string
	ok := 0
	for _, d := range r.Servers {
		switch {
		case d.NotApproved:
			parts = append(parts, d.Server+": not approved ("+d.Approve+")")
		case d.OK:
			ok++
			parts = append(parts, d.Server+": ok")
		default:
			parts = append(parts, d.Server+": FAIL at "+d.Failed)
			if why == "" {
				for _, st := range d.Steps {
					if !st.OK {
						why = fmt.Sprintf("; %s: %s failed: %s", d.Server, st.Name, textfmt.Preview([]byte(st.Detail), 300))
						if st.Hint != "" {
							why += " (hint: " + st.Hint + ")"
						}
						break
					}
				}
			}
		}
	}
	s := fmt.Sprintf("%d of %d servers ok: %s%s", ok, len(r.Servers), strings.Join(parts, ", "), why)
	if len(r.Files) > 0 {
		s += fmt.Sprintf("; %d config %s with problems", len(r.Files), countNoun(len(r.Files), "file", "files"))
	}
	return s
}

// TappedSession is one session of the tap's sessions folder: sonde
// sessions --json's, the one type both read it into.
type TappedSession = sessions.Tapped

// clean escapes what came from a recording (its name, header and notes).
func cleanTapped(t *TappedSession) {
	t.ID, t.File, t.Label, t.URL = textfmt.Escape(t.ID), textfmt.Escape(t.File), textfmt.Escape(t.Label), textfmt.Escape(t.URL)
	t.HostName, t.Problem = textfmt.Escape(t.HostName), textfmt.Escape(t.Problem)
	t.Command = slices.Clone(t.Command) // the lister's slice stays as it was
	for i, w := range t.Command {
		t.Command[i] = textfmt.Escape(w)
	}
}

// OwnSession is one of this server's sessions, in sessions_list.
type OwnSession struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Kind    string    `json:"kind"`
	Started time.Time `json:"started"`
	// Resource is its capture's URI (resources/read), when it has one.
	Resource string `json:"resource,omitempty"`
}

// SessionsList is sessions_list's answer.
type SessionsList struct {
	// Sessions are this server's own (session_start's, session_open's).
	Sessions []OwnSession `json:"sessions"`
	// Tapped are the sessions sonde tap recorded for real hosts, live
	// first (at most maxTapped; Omitted counts the rest).
	Tapped  []TappedSession `json:"tapped"`
	Omitted int             `json:"omitted,omitempty"`
	// TappedProblem says why the sessions folder could not be read.
	TappedProblem string `json:"tapped_problem,omitempty"`
}

// maxTapped bounds the tapped sessions listed.
const maxTapped = 200

// Summary is the short text beside the structured answer.
func (l *SessionsList) Summary() string {
	live := 0
	for _, t := range l.Tapped {
		if t.Live {
			live++
		}
	}
	s := fmt.Sprintf("%d %s of this server; %d tapped (%d live)", len(l.Sessions), countNoun(len(l.Sessions), "session", "sessions"), len(l.Tapped)+l.Omitted, live)
	if live > 0 {
		s += "; session_open attaches to a live one"
	}
	if l.TappedProblem != "" {
		s += "; the sessions folder: " + l.TappedProblem
	}
	return s
}
