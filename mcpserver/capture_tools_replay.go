package mcpserver

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/internal/textfmt"
	"github.com/sonde-mcp/sonde/mcp"
	"github.com/sonde-mcp/sonde/replay/against"
)

// Caps of replay_against's answer.
const (
	// maxReplayResults bounds the requests listed (the different ones
	// first); maxReplayDiffs the differences of each; replayValue each
	// value shown.
	maxReplayResults = 200
	maxReplayDiffs   = 20
	replayValue      = 2000
	// maxReplayAnswer bounds the text of the requests listed, in bytes:
	// the rest are counted in Omitted.
	maxReplayAnswer = 256 << 10
)

// replayIn is replay_against's input: the capture, and the server to
// re-send it to, as session_start takes it.
type replayIn struct {
	Capture string   `json:"capture" jsonschema:"the capture whose requests are re-sent: a file or a session id, as capture_lint takes"`
	Command string   `json:"command,omitempty" jsonschema:"the server's command, as session_start takes it: word for word a command line given to sonde mcp with --allow"`
	Args    []string `json:"args,omitempty" jsonschema:"the command's arguments, one word each"`
	URL     string   `json:"url,omitempty" jsonschema:"instead of a command: the server's URL (loopback, or given with --allow)"`
	Server  string   `json:"server,omitempty" jsonschema:"instead of a command: a server of the host config files, by name"`
	Ignore  []string `json:"ignore,omitempty" jsonschema:"paths left out of the diff besides the volatile ones, e.g. result.content[*].text or ..etag"`
	Pacing  bool     `json:"pacing,omitempty" jsonschema:"re-send with the recorded delays between requests (default: all at once)"`
}

// ReplayOutcome is how one request ended, recorded or now.
type ReplayOutcome struct {
	// Kind is result, error, timeout, …; Code and Message a sonde error's.
	Kind    string `json:"kind"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// RPCCode is a JSON-RPC error's code; Result the result, escaped and
	// cut at replayValue bytes.
	RPCCode int64  `json:"rpc_code,omitempty"`
	Result  string `json:"result,omitempty"`
}

// ReplayDiff is one difference of a result: its path, and the values.
type ReplayDiff struct {
	Path     string `json:"path"`
	Recorded string `json:"recorded,omitempty"`
	Now      string `json:"now,omitempty"`
}

// ReplayRequest is one re-sent request compared with its recording.
type ReplayRequest struct {
	Index      int           `json:"index"`
	Method     string        `json:"method"`
	Tool       string        `json:"tool,omitempty"`
	RecordedID any           `json:"recorded_id,omitempty"`
	ID         any           `json:"id,omitempty"`
	Status     string        `json:"status"`
	Change     string        `json:"change,omitempty"`
	Recorded   ReplayOutcome `json:"recorded"`
	Now        ReplayOutcome `json:"now"`
	Diffs      []ReplayDiff  `json:"diffs,omitempty"`
	// DiffsOmitted counts the differences past maxReplayDiffs.
	DiffsOmitted int `json:"diffs_omitted,omitempty"`
}

// ReplayResult is replay_against's answer: the structural diff sonde
// replay --against prints.
type ReplayResult struct {
	Capture  string          `json:"capture"`
	Launched string          `json:"launched"`
	Equal    bool            `json:"equal"`
	Counts   ReplayCounts    `json:"counts"`
	Requests []ReplayRequest `json:"requests"`
	// Omitted counts the requests past maxReplayResults or the answer's
	// budget (the equal ones are left out first).
	Omitted  int      `json:"omitted,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// ReplayCounts are the requests by status.
type ReplayCounts struct {
	Equal     int `json:"equal"`
	Different int `json:"different"`
	Skipped   int `json:"skipped"`
}

func (s *Server) registerReplayAgainst() {
	addTool(s, &sdk.Tool{
		Name: "replay_against",
		Description: "Re-send a capture's requests to a server (a command allowed as session_start allows it, a URL, or a configured server) " +
			"with the capture's protocol version and client capabilities, and compare each answer with the recorded one, as sonde replay --against: " +
			"a structural diff ignoring volatile fields (docs/replay.md) and the ignore paths, and outcomes that changed in kind. It runs the server " +
			"and sends it the recorded requests (tool calls included).",
		Annotations: acting("Replay a capture against a server", false, false),
	}, s.replayAgainst)
}

// replayAgainst is replay_against.
func (s *Server) replayAgainst(ctx context.Context, in replayIn) (*ReplayResult, string, error) {
	path, err := s.captureRefs().resolve(in.Capture)
	if err != nil {
		return nil, "", err
	}
	var ignore []against.Path
	for _, p := range in.Ignore {
		ip, err := against.ParsePath(p)
		if err != nil {
			return nil, "", fmt.Errorf("ignore %q: %s", textfmt.Escape(p), textfmt.Escape(err.Error()))
		}
		ignore = append(ignore, ip)
	}
	l, label, err := s.launch(startIn{Command: in.Command, Args: in.Args, URL: in.URL, Server: in.Server})
	if err != nil {
		return nil, "", err
	}
	script, err := loadScript(path)
	if err != nil {
		return nil, "", err
	}
	if v := script.ProtocolVersion; v != "" && mcp.IsSupportedVersion(v) {
		l.ProtocolVersion = v
	}
	l.ServerRequests = script.ServerRequests()
	conn, err := s.opts.Open(ctx, l, nil)
	if err != nil {
		return nil, "", fmt.Errorf("replay_against: %s did not start: %s (session_start on it shows its stderr)", label, textfmt.Escape(err.Error()))
	}
	defer conn.Close()
	speed := 0.0
	if in.Pacing {
		speed = 1
	}
	rep, err := against.Run(ctx, conn.Client(), script, against.Options{Speed: speed, Ignore: ignore})
	if err != nil {
		return nil, "", fmt.Errorf("replay_against: interrupted: %v", err)
	}
	out := replayResult(rep, conn.Redactor())
	out.Capture, out.Launched, out.Warnings = textfmt.Escape(path), label, escapeAll(script.Warnings)
	return out, out.Summary(), nil
}

// loadScript reads a capture's requests for a re-drive.
func loadScript(path string) (*against.Script, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, captureReadErr(path, err)
	}
	defer fh.Close()
	script, err := against.Load(fh)
	if err != nil {
		return nil, captureReadErr(path, err)
	}
	if len(script.Requests) == 0 {
		return nil, &CaptureError{Arg: path, Msg: "capture " + path + " holds no request of the client's to re-send (besides initialize)"}
	}
	return script, nil
}

// Summary is the short text beside the structured answer.
func (r *ReplayResult) Summary() string {
	c := r.Counts
	if r.Equal {
		return fmt.Sprintf("%s against %s: all %d requests answered as recorded (%d skipped: no recorded outcome)", r.Capture, r.Launched, c.Equal+c.Skipped, c.Skipped)
	}
	s := fmt.Sprintf("%s against %s: %d of %d requests answered differently", r.Capture, r.Launched, c.Different, c.Equal+c.Different+c.Skipped)
	for _, q := range r.Requests {
		if q.Status == against.StatusDifferent {
			what := q.Method
			if q.Tool != "" {
				what += " " + q.Tool
			}
			s += "; first: " + what
			if q.Change != "" {
				s += " (" + q.Change + ")"
			} else if len(q.Diffs) > 0 {
				s += " at " + q.Diffs[0].Path
			}
			break
		}
	}
	return s
}

// replayResult is rep as replay_against answers it: server text redacted
// and escaped, values cut, the different requests listed first up to
// maxReplayResults.
func replayResult(rep *against.Report, red *capture.Redactor) *ReplayResult {
	out := &ReplayResult{Equal: rep.Equal, Requests: []ReplayRequest{}}
	out.Counts.Equal, out.Counts.Different, out.Counts.Skipped = rep.Counts()
	order := make([]int, 0, len(rep.Results))
	for pass := 0; pass < 2; pass++ { // the different ones first
		for i, r := range rep.Results {
			if (r.Status == against.StatusDifferent) == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	used := 0
	for k, i := range order {
		if len(out.Requests) == maxReplayResults || used > maxReplayAnswer {
			out.Omitted = len(order) - k
			break
		}
		r := rep.Results[i]
		q := ReplayRequest{Index: r.Index, Method: textfmt.Escape(r.Method), Tool: serverString(red, r.Tool, replayValue),
			RecordedID: idValue(r.RecordedID), ID: idValue(r.ID), Status: r.Status, Change: textfmt.Escape(r.Change),
			Recorded: replayOutcome(r.Recorded, red), Now: replayOutcome(r.Now, red)}
		for j, d := range r.Diffs {
			if j == maxReplayDiffs {
				q.DiffsOmitted = len(r.Diffs) - j
				break
			}
			q.Diffs = append(q.Diffs, ReplayDiff{Path: serverString(red, d.Path, replayValue),
				Recorded: serverString(red, string(d.Recorded), replayValue), Now: serverString(red, string(d.Now), replayValue)})
		}
		used += q.size()
		out.Requests = append(out.Requests, q)
	}
	return out
}

// size is about how many bytes q takes in the answer.
func (q *ReplayRequest) size() int {
	n := len(q.Method) + len(q.Tool) + len(q.Change) + len(q.Recorded.Result) + len(q.Recorded.Message) + len(q.Now.Result) + len(q.Now.Message)
	for _, d := range q.Diffs {
		n += len(d.Path) + len(d.Recorded) + len(d.Now)
	}
	return n
}

// replayOutcome is o with its server text redacted, escaped and cut.
func replayOutcome(o against.Outcome, red *capture.Redactor) ReplayOutcome {
	out := ReplayOutcome{Kind: o.Kind, Code: o.Code, Message: serverString(red, o.Message, replayValue)}
	if o.Error != nil {
		out.RPCCode = o.Error.Code
		out.Message = serverString(red, o.Error.Message, replayValue)
	}
	if len(o.Result) > 0 {
		out.Result = serverString(red, string(o.Result), replayValue)
	}
	return out
}
