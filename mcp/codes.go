package mcp

import "strconv"

// codeNames is the one table of JSON-RPC error code names: the standard
// JSON-RPC codes and those the MCP specification defines, by the names its
// schema.ts and pages give them. Every place that shows a code by name
// reads it (CodeName, CodeText).
var codeNames = map[int64]string{
	-32700:                              "ParseError",
	-32600:                              "InvalidRequest",
	-32601:                              "MethodNotFound",
	-32602:                              "InvalidParams",
	-32603:                              "InternalError",
	-32002:                              "ResourceNotFound",       // 2411–2511; 2607 uses -32602
	-32042:                              "URLElicitationRequired", // 2511
	CodeHeaderMismatch:                  "HeaderMismatch",
	CodeMissingRequiredClientCapability: "MissingRequiredClientCapability",
	CodeUnsupportedProtocolVersion:      "UnsupportedProtocolVersion",
}

// CodeName returns the name of a JSON-RPC error code ("" for a code the
// table does not name).
func CodeName(code int64) string { return codeNames[code] }

// CodeText shows a code as output shows it: the number, followed by its
// name for the codes the 2026-07-28 specification added (-32020, -32021,
// -32022: "-32021 MissingRequiredClientCapability"), which nobody knows by
// number yet; the standard JSON-RPC codes and the older MCP codes (-32002,
// -32042) show as the number alone, as they always have.
func CodeText(code int64) string {
	s := strconv.FormatInt(code, 10)
	switch code {
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion:
		s += " " + codeNames[code]
	}
	return s
}
