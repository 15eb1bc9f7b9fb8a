package mcpserver

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// captureIn names one capture.
type captureIn struct {
	Path string `json:"path" jsonschema:"a capture file (sonde call --record FILE, sonde tap), or a session id: one of this server's (s1...) or a tapped session's from sessions_list (the start of one will do)"`
}

// diffIn names the two captures of capture_diff.
type diffIn struct {
	A string `json:"a" jsonschema:"the old capture: a file or a session id, as capture_lint takes"`
	B string `json:"b" jsonschema:"the new capture: a file or a session id"`
}

// registerCaptureTools registers capture_lint, capture_stats, capture_diff
// and replay_against.
func (s *Server) registerCaptureTools() {
	addTool(s, &sdk.Tool{
		Name: "capture_lint",
		Description: "The protocol violations of a capture, as sonde lint finds them: each finding's rule, level, event, time, direction, id, method, " +
			"the start of the frame's bytes and what was seen; the count per rule and each rule's explanation and spec reference (docs/lint.md). " +
			"At most 200 findings are listed; counts cover all.",
		Annotations: readOnly("Lint a capture"),
	}, func(ctx context.Context, in captureIn) (*LintResult, string, error) {
		path, err := s.captureRefs().resolve(in.Path)
		if err != nil {
			return nil, "", err
		}
		r, err := Lint(path)
		if err != nil {
			return nil, "", err
		}
		return r, r.Summary(), nil
	})
	addTool(s, &sdk.Tool{
		Name: "capture_stats",
		Description: "A capture's figures, as sonde stats --json gives them: per method (and tool) how many requests ended, their outcomes, " +
			"errors, latency p50/p95/p99/max (ns); the most requests in flight and when, a histogram of requests in flight; the context cost " +
			"of each tool in bytes (definition, description, schemas, results).",
		Annotations: readOnly("Capture statistics"),
	}, func(ctx context.Context, in captureIn) (*StatsResult, string, error) {
		path, err := s.captureRefs().resolve(in.Path)
		if err != nil {
			return nil, "", err
		}
		r, err := Stats(path)
		if err != nil {
			return nil, "", err
		}
		return r, r.Summary(), nil
	})
	addTool(s, &sdk.Tool{
		Name: "capture_diff",
		Description: "What changed between two captures of a server, as sonde diff --json: server info, capabilities, tools, prompts, " +
			"resources and templates field by field (a read-only tool turned destructive named so), calls whose outcome or median latency " +
			"changed, and the context cost of each tool.",
		Annotations: readOnly("Compare two captures"),
	}, func(ctx context.Context, in diffIn) (*DiffResult, string, error) {
		refs := s.captureRefs()
		a, err := refs.resolve(in.A)
		if err != nil {
			return nil, "", err
		}
		b, err := refs.resolve(in.B)
		if err != nil {
			return nil, "", err
		}
		r, err := Diff(a, b)
		if err != nil {
			return nil, "", err
		}
		return r, r.Summary(), nil
	})
	s.registerReplayAgainst()
}

// captureRefs resolves the capture tools' names: this server's sessions
// first, then files, then the tap's sessions folder.
func (s *Server) captureRefs() captureRefs {
	return captureRefs{own: s.ownCapture, dir: s.opts.Host.SessionsDir}
}
