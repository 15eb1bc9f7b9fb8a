package timeouts

import "time"

// A NamedPreset is a real client's default timeout policy, with where it
// was read. docs/timeouts.md lists the same, and a test holds the two
// together.
type NamedPreset struct {
	Policy
	// Client names the client and the version read.
	Client string `json:"client"`
	// Source is the file (and the name in it) the numbers come from.
	Source string `json:"source"`
}

// Presets are the named policies, in the order they are evaluated when
// no --policy is given. Claude Code is not among them: its documentation
// names the MCP_TIMEOUT and MCP_TOOL_TIMEOUT variables but no default for
// a request's timeout.
func Presets() []NamedPreset {
	return []NamedPreset{
		{
			Policy: Policy{Name: "ts-sdk", Timeout: 60 * time.Second},
			Client: "TypeScript SDK 2.0.0 (@modelcontextprotocol/core; 60000 in 1.25.1 too)",
			Source: "packages/core-internal/src/shared/protocol.ts: DEFAULT_REQUEST_TIMEOUT_MSEC = 60_000; resetTimeoutOnProgress defaults to false, no maxTotalTimeout",
		},
		{
			Policy: Policy{Name: "ts-sdk-reset", Timeout: 60 * time.Second, ResetOnProgress: true},
			Client: "TypeScript SDK 2.0.0 with resetTimeoutOnProgress: true",
			Source: "packages/core-internal/src/shared/protocol.ts: DEFAULT_REQUEST_TIMEOUT_MSEC, _resetTimeout (a progress notification restarts the timer)",
		},
		{
			Policy: Policy{Name: "python-sdk", Timeout: 0},
			Client: "Python SDK v2.0.0 (and v1.29.0)",
			Source: "src/mcp/client/session.py: ClientSession(read_timeout_seconds=None); anyio.fail_after(None) waits for ever (v1.29.0: src/mcp/shared/session.py send_request)",
		},
		{
			Policy: Policy{Name: "go-sdk", Timeout: 0},
			Client: "Go SDK v1.7.0",
			Source: "mcp/transport.go: call() awaits the caller's context only; the SDK sets no deadline of its own",
		},
		{
			Policy: Policy{Name: "inspector", Timeout: 60 * time.Second, ResetOnProgress: true},
			Client: "MCP Inspector 2.3.0 (on TypeScript SDK 2.0.0)",
			Source: "core/mcp/inspectorClient.ts: resetTimeoutOnProgress ?? true, timeout only when the server's requestTimeout > 0 (default 0: the SDK's 60000); docs/v1-to-v2-migration.md: no max total",
		},
		{
			Policy: Policy{Name: "inspector-v1", Timeout: 300 * time.Second, ResetOnProgress: true, MaxTotal: 60 * time.Second, TotalOnProgress: true},
			Client: "MCP Inspector 0.22.0 (v1, on TypeScript SDK ^1.25.2)",
			Source: "client/src/lib/constants.ts: MCP_SERVER_REQUEST_TIMEOUT 300000, MCP_REQUEST_TIMEOUT_RESET_ON_PROGRESS true, MCP_REQUEST_MAX_TOTAL_TIMEOUT 60000 (the SDK checks it when progress arrives)",
		},
		{
			Policy: Policy{Name: "sonde", Session: true},
			Client: "this session",
			Source: "client/call.go: each request's own budget, recorded on its queued transition (--timeout, --timeout-reset-on-progress, --max-total-timeout)",
		},
	}
}

// Preset returns the preset named name.
func Preset(name string) (NamedPreset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return NamedPreset{}, false
}

// PresetNames are the presets' names, in order.
func PresetNames() []string {
	var names []string
	for _, p := range Presets() {
		names = append(names, p.Name)
	}
	return names
}
