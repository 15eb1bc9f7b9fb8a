// Package lint finds MCP protocol violations in a stream of client events.
//
// A Linter is fed the events of one client in order (Check), from a capture
// file or live, and returns the findings each event shows: the frame that
// broke a rule, the rule's stable name and what was seen. The same code
// serves `sonde lint FILE` and the marks in the UI's Frames pane.
//
// Rules that depend on what came before (the handshake, pending ids,
// progress tokens, the negotiated version) stay silent when the stream did
// not start at the beginning of the session (a recording started mid-way,
// missed events): a linter that guesses reports violations that are not
// there. The frame verdicts the client computed (late, duplicate, unknown)
// are used as they are: the client knew every id it sent.
package lint

// Level says how strongly the specification words a rule.
type Level string

// The levels.
const (
	// Must: the specification says MUST or MUST NOT.
	Must Level = "must"
	// Should: the specification says SHOULD or SHOULD NOT.
	Should Level = "should"
)

// Rule describes one check.
type Rule struct {
	// Name is stable: scripts and docs/lint.md use it.
	Name  string `json:"name"`
	Level Level  `json:"level"`
	// Summary is the one-line explanation.
	Summary string `json:"summary"`
	// Spec is where the specification says it (docs/specification paths,
	// shortened as in spec-digest: 2511 is 2025-11-25).
	Spec string `json:"spec"`
}

// The rule names.
const (
	RuleNotJSON             = "not-json"
	RuleNotObject           = "not-object"
	RuleInvalidMessage      = "invalid-message"
	RuleResultAndError      = "result-and-error"
	RuleNullID              = "null-id"
	RuleNotificationWithID  = "notification-with-id"
	RuleUnknownID           = "unknown-id"
	RuleLateResponse        = "late-response"
	RuleDuplicateResponse   = "duplicate-response"
	RuleIDReused            = "id-reused"
	RuleProgressAfter       = "progress-after-response"
	RuleBeforeInitialize    = "request-before-initialize"
	RuleCallBeforeInit      = "call-before-initialized"
	RuleUnnegotiatedVersion = "unnegotiated-version"
	RuleUndeclared          = "undeclared-capability"
	RuleTaskTerminal        = "task-terminal-changed"
	RuleCacheHint           = "cache-hint"
	RuleCacheRefetch        = "cache-refetch"
	RuleCacheChanged        = "cache-changed"
	RuleAppVisibility       = "app-tool-visibility"
	RuleListItemType        = "list-item-type"
	RuleResultType          = "result-type"
	RuleUnnegotiatedExt     = "unnegotiated-extension"
	RuleMalformedExt        = "malformed-extension"
	RuleStructuredText      = "structured-content-text"
	RuleOutputSchema        = "output-schema"
	RuleRequestState        = "request-state"
	RuleHeaderMismatch      = "header-mismatch"
	RuleAcceptHeader        = "accept-header"
	RuleContentType         = "content-type"
)

// Rules returns every rule, in the order of docs/lint.md.
func Rules() []Rule {
	return []Rule{
		{RuleNotJSON, Must, "a line on the wire that is not JSON (a server logging on stdout): every line must be one JSON-RPC message", "2511/basic/transports.mdx §stdio: the server MUST NOT write anything to its stdout that is not a valid MCP message"},
		{RuleNotObject, Must, "valid JSON that is not an object (an array, a string, a number): every message is a JSON-RPC object", "2511/basic/transports.mdx §stdio; 2511/basic/index.mdx (batches were only allowed in 2025-03-26)"},
		{RuleInvalidMessage, Must, "a JSON object that breaks another JSON-RPC rule (no \"jsonrpc\":\"2.0\", a response with neither result nor error, a bad error object)", "2511/basic/index.mdx §Requests, §Responses; JSON-RPC 2.0"},
		{RuleResultAndError, Must, "a response that sets both result and error", "2411/basic/messages.mdx, 2506/basic/index.mdx: either a result or an error MUST be set; a response MUST NOT set both"},
		{RuleNullID, Must, "a request whose id is null", "2511/basic/index.mdx §Requests: the ID MUST NOT be null"},
		{RuleNotificationWithID, Must, "a notification (a notifications/… method) sent with an id, which makes it a request that expects a response", "2511/basic/index.mdx §Notifications: notifications MUST NOT include an ID"},
		{RuleUnknownID, Must, "a response whose id matches no request that was sent (ids keep their JSON type: 3 is not \"3\")", "2511/basic/index.mdx §Responses: a response carries the ID of the request it answers"},
		{RuleLateResponse, Should, "a response for a request that had already timed out or been cancelled (notifications/cancelled was sent): the receiver should have stopped", "2511/basic/utilities/cancellation.mdx: receivers SHOULD not respond after a cancellation; 2511/basic/lifecycle.mdx §Timeouts"},
		{RuleDuplicateResponse, Must, "a second response for a request that already had one", "JSON-RPC 2.0 §5: one response per request; 2511/basic/index.mdx §Responses"},
		{RuleIDReused, Must, "a request whose id is already in use by a pending request from the same side", "2511/basic/index.mdx §Requests: the ID MUST NOT have been previously used by the requestor within the same session (2607: unique among in-flight requests)"},
		{RuleProgressAfter, Must, "a progress notification for a request that has already received its response", "2511/basic/utilities/progress.mdx: progress notifications MUST stop after completion"},
		{RuleBeforeInitialize, Should, "a request other than ping before the handshake allows it: from the client before the initialize result, from the server before notifications/initialized", "2511/basic/lifecycle.mdx §Initialization: the client SHOULD NOT send requests other than pings before the server has responded to initialize; the server SHOULD NOT send requests other than pings and logging before receiving initialized"},
		{RuleCallBeforeInit, Must, "a tools/call sent after the initialize result but before the client's notifications/initialized", "2511/basic/lifecycle.mdx §Initialization: after successful initialization the client MUST send an initialized notification"},
		{RuleUndeclared, Must, "a request from the server that needs a client capability the client did not declare in initialize (sampling, elicitation, roots, tasks)", "2506/basic/lifecycle.mdx §Operation: both parties MUST only use capabilities that were successfully negotiated"},
		{RuleTaskTerminal, Must, "a task the server reported in a terminal status (completed, failed, cancelled) reported later in another status (tasks/get, tasks/cancel, notifications/tasks/status)", "2511/basic/utilities/tasks.mdx: tasks in a terminal status MUST NOT transition to any other status"},
		{RuleCacheHint, Must, "a 2026-07-28 list or read result (tools/list, resources/list, resources/templates/list, prompts/list, resources/read) or a server/discover result without its cache hints: ttlMs (a non-negative integer) and cacheScope (a string), or with one of the wrong type", "SEP-2549 (final; spec PR #2855): ttlMs and cacheScope are required on 2607 list and read results and on server/discover (2607/server/discover.mdx); Claude Code drops a tools/list without them (kaibo PR #142)"},
		{RuleCacheRefetch, Should, "a 2026-07-28 list or read request (tools/list, resources/list, resources/templates/list, prompts/list, resources/read; each page, each uri) sent again while the earlier result is still fresh: inside its ttlMs, with no list_changed or resources/updated notification since", "SEP-2549 (final; spec PR #2855): ttlMs is how long the client may reuse the result; asking again inside it is traffic the hint was there to save (sonde's reading: the spec allows it, hence should)"},
		{RuleCacheChanged, Should, "a 2026-07-28 list or read result that differs from the earlier one (ttlMs, cacheScope and _meta left out) while the earlier one was still fresh, with no list_changed or resources/updated notification since: a client that honoured the hint shows stale data", "SEP-2549 (final; spec PR #2855): ttlMs is how long the client may reuse the result; a server that changes it sooner announces it (2511/server/tools.mdx §List Changed Notification, resources.mdx §Subscriptions)"},
		{RuleAppVisibility, Must, "a tools/call of an MCP Apps tool (io.modelcontextprotocol/ui) that its _meta.ui.visibility does not allow: a tool hidden from the model (no \"model\") called by a client that did not declare the extension, so no app can have made the call; or a tool whose visibility names neither the model nor the app", "SEP-1865 (MCP Apps, ext-apps specification/2026-01-26/apps.mdx §Resource Discovery, Visibility): the host MUST NOT include tools in the agent's tool list when their visibility does not include \"model\"; the host MUST reject tools/call requests from apps for tools that do not include \"app\""},
		{RuleListItemType, Must, "a list result (tools, resources, resource templates, prompts) with a value of the wrong JSON type in an item (readOnlyHint: \"true\"): strict clients drop the whole list", "schema.ts of each revision (Tool, ToolAnnotations, Resource, ResourceTemplate, Prompt, PromptArgument); observed by mcpsnoop (docs/CI.md): TS SDK 1.32.1 rejects the list, Go SDK 1.8.0 fails to decode it, Claude Code 2.1.292 shows no tools"},
		{RuleResultType, Must, "a result answering a 2026-07-28 request without a resultType, with one the spec does not know, or input_required on a request other than tools/call, resources/read and prompts/get", "2607/basic/index.mdx §ResultType: every result MUST include a resultType (complete or input_required); an unknown value MUST be considered invalid; 2607/basic/patterns/mrtr.mdx"},
		{RuleUnnegotiatedExt, Must, "an extension used without negotiation: a resultType \"task\" answering a request whose client capabilities did not declare io.modelcontextprotocol/tasks, a tasks/* request to a server whose server/discover did not advertise it", "SEP-2133 (extensions in capabilities.extensions); 2607/basic/index.mdx §_meta (-32021 MissingRequiredClientCapability); 2506/basic/lifecycle.mdx §Operation: only use capabilities that were negotiated; docs/extensions/tasks/overview.mdx"},
		{RuleMalformedExt, Must, "a capabilities.extensions that is not an object, a key that is not an extension identifier (prefix/name), or an extension whose settings are not an object", "SEP-2133: capabilities.extensions maps extension identifiers ({prefix}/{name}, as io.modelcontextprotocol/ui) to their settings objects"},
		{RuleStructuredText, Should, "a tools/call result with structuredContent but no text block at all (the spec asks for one holding its serialized JSON)", "2511/server/tools.mdx §Structured Content: a tool that returns structured content SHOULD also return the serialized JSON in a TextContent block"},
		{RuleOutputSchema, Must, "a tools/call result whose structuredContent does not conform to the outputSchema its tools/list declared, or that has none although the tool declares one", "2511/server/tools.mdx §Output Schema: servers MUST provide structured results that conform to this schema"},
		{RuleRequestState, Must, "an MRTR retry whose requestState is changed or missing from the one the input_required answer gave, or a requestState no answer gave (invented)", "2607/basic/patterns/mrtr.mdx: the client retries with inputResponses and the exact requestState, under a new id"},
		{RuleHeaderMismatch, Must, "an HTTP POST of a 2026-07-28 request whose MCP-Protocol-Version, Mcp-Method or Mcp-Name header differs from its body (the server must answer 400 with -32020 HeaderMismatch)", "2607/basic/transports/streamable-http.mdx §Request Metadata, §Server Validation: MCP-Protocol-Version MUST match _meta; a mismatch gets 400 with -32020"},
		{RuleAcceptHeader, Must, "an HTTP POST whose Accept header does not list both application/json and text/event-stream", "2511/basic/transports.mdx §Sending Messages to the Server: the client MUST include an Accept header listing both; 2607 the same"},
		{RuleContentType, Must, "an HTTP response with a body but no Content-Type header", "2511/basic/transports.mdx §Sending Messages to the Server: the server MUST return Content-Type text/event-stream or application/json"},
		{RuleUnnegotiatedVersion, Must, "a protocol version in later traffic (an MCP-Protocol-Version header, a result, a request's _meta) that differs from the one the initialize result negotiated", "2511/basic/lifecycle.mdx §Version Negotiation; 2511/basic/transports.mdx §Protocol Version Header: MCP-Protocol-Version: <protocol-version> on all subsequent requests"},
	}
}

// Lookup returns the rule named name.
func Lookup(name string) (Rule, bool) {
	for _, r := range Rules() {
		if r.Name == name {
			return r, true
		}
	}
	return Rule{}, false
}
