package mcp

import (
	"encoding/json"
	"testing"
)

func TestReadResourceResultTextAndBlob(t *testing.T) {
	raw := `{"contents":[{"uri":"a://t","mimeType":"text/plain","text":""},{"uri":"a://b","blob":"AAE="}]}`
	var r ReadResourceResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if r.Contents[0].Text == nil || *r.Contents[0].Text != "" || r.Contents[0].Blob != nil {
		t.Fatalf("empty text lost: %+v", r.Contents[0])
	}
	if r.Contents[1].Blob == nil || *r.Contents[1].Blob != "AAE=" || r.Contents[1].Text != nil {
		t.Fatalf("%+v", r.Contents[1])
	}
}

func TestPromptMessageEmbeddedResource(t *testing.T) {
	raw := `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"user","content":{"type":"resource","resource":{"uri":"x://1","text":"body"}}}]}`
	var r GetPromptResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if r.Messages[0].Content.Text != "hi" || r.Messages[1].Content.Resource == nil || *r.Messages[1].Content.Resource.Text != "body" {
		t.Fatalf("%+v", r)
	}
}

func TestCompleteParamsShape(t *testing.T) {
	b, _ := json.Marshal(CompleteParams{Ref: CompleteRef{Type: RefResource, URI: "x://{id}"}, Argument: CompleteArgument{Name: "id", Value: ""}})
	if string(b) != `{"ref":{"type":"ref/resource","uri":"x://{id}"},"argument":{"name":"id","value":""}}` {
		t.Fatalf("%s", b)
	}
}

func TestLogLevels(t *testing.T) {
	if LogLevelRank("debug") != 0 || LogLevelRank("emergency") != 7 || LogLevelRank("loud") != -1 {
		t.Fatal("ranks")
	}
}

func TestCapabilities(t *testing.T) {
	raw := `{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{},"completions":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`
	var c ServerCapabilities
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	if !c.Resources.Subscribe || c.Prompts != nil || c.Logging == nil || c.Completions == nil || !c.Tasks.ToolCallTasks() || c.Tasks.Cancel == nil {
		t.Fatalf("%+v", c)
	}
	var none ServerCapabilities
	if none.Tasks.ToolCallTasks() {
		t.Fatal("nil tasks capability allows task calls")
	}
}

func TestTaskTTLNull(t *testing.T) {
	var task Task
	if err := json.Unmarshal([]byte(`{"taskId":"t","status":"working","ttl":null}`), &task); err != nil || task.TTL != nil || TaskTerminal(task.Status) {
		t.Fatalf("%+v %v", task, err)
	}
	b, _ := json.Marshal(CallToolTaskParams{Name: "x", Task: TaskMetadata{}})
	if string(b) != `{"name":"x","task":{}}` {
		t.Fatalf("%s", b)
	}
}
