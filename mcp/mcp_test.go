package mcp

import (
	"encoding/json"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSupportedVersions(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		if !IsSupportedVersion(v) {
			t.Errorf("%s not supported", v)
		}
	}
	for _, v := range []string{"", "2026-07-28", "2024-10-07", "1999-01-01"} {
		if IsSupportedVersion(v) {
			t.Errorf("%s supported", v)
		}
	}
	if SupportedVersions[0] != LatestVersion {
		t.Fatal("the newest supported version is not the default")
	}
}

func TestCallToolResultKeepsUnknownBlocks(t *testing.T) {
	raw := `{"content":[{"type":"text","text":"a"},{"type":"image","data":"AAA=","mimeType":"image/png"},{"type":"resource_link","uri":"file:///x"}],"structuredContent":{"n":1},"isError":true}`
	var r CallToolResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 3 || r.Content[1].MimeType != "image/png" || r.Content[2].URI != "file:///x" || !r.IsError || string(r.StructuredContent) != `{"n":1}` {
		t.Fatalf("%+v", r)
	}
}

func TestCallToolParamsOmitEmpty(t *testing.T) {
	b, _ := json.Marshal(CallToolParams{Name: "echo"})
	if string(b) != `{"name":"echo"}` {
		t.Fatalf("%s", b)
	}
}
