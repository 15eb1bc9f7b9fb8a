package mcp

import "testing"

func TestCodeText(t *testing.T) {
	for code, want := range map[int64]string{
		-32020: "-32020 HeaderMismatch",
		-32021: "-32021 MissingRequiredClientCapability",
		-32022: "-32022 UnsupportedProtocolVersion",
		-32023: "-32023", // reserved, not named
		-32601: "-32601", // standard: the number, as before
		-32042: "-32042",
		-32001: "-32001",
		0:      "0",
	} {
		if got := CodeText(code); got != want {
			t.Errorf("CodeText(%d) = %q, want %q", code, got, want)
		}
	}
	if CodeName(-32601) != "MethodNotFound" || CodeName(-32042) != "URLElicitationRequired" || CodeName(-32001) != "" {
		t.Error("CodeName")
	}
}
