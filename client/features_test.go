package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sonde-mcp/sonde/mcp"
)

// The fixture declares only tools: a feature request is still sent (a
// debugger shows what the server does with it), after a note naming the
// capability it lacks.
func TestUndeclaredCapabilityIsSentWithANote(t *testing.T) {
	s := start(t, Options{Timeout: 5 * time.Second}, fixtureArgs{})
	if w := s.c.Undeclared(mcp.MethodResourcesRead); w != "" {
		t.Fatalf("a note before the handshake: %q", w)
	}
	s.init()
	ctx := context.Background()
	for _, tc := range []struct {
		method, need string
		run          func() error
	}{
		{mcp.MethodResourcesSubscribe, "resources.subscribe", func() error { return s.c.SubscribeResource(ctx, "x://y") }},
		{mcp.MethodPromptsGet, "prompts", func() error { _, _, err := s.c.GetPrompt(ctx, "p", nil); return err }},
		{mcp.MethodComplete, "completions", func() error {
			_, err := s.c.Complete(ctx, mcp.CompleteRef{Type: mcp.RefPrompt, Name: "p"}, mcp.CompleteArgument{Name: "a"}, nil)
			return err
		}},
	} {
		err := tc.run()
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeRemote || e.RPC.Code != -32601 {
			t.Fatalf("%s: got %v", tc.method, err)
		}
		want := tc.method + ": the server did not declare the " + tc.need + " capability; sent anyway"
		s.waitFor("the note for "+tc.method, func(ev Event) bool { return ev.Kind == EvNote && ev.Note == want })
	}
	// The fixture lists resources without declaring them.
	if res, err := s.c.ListResources(ctx); err != nil || len(res) != 5 {
		t.Fatalf("%+v %v", res, err)
	}
	s.waitFor("the resources note", func(ev Event) bool {
		return ev.Kind == EvNote && ev.Note == "resources/list: the server did not declare the resources capability; sent anyway"
	})
	// The fixture answers logging/setLevel without declaring logging.
	if err := s.c.SetLogLevel(ctx, "alert"); err != nil {
		t.Fatal(err)
	}
	s.waitFor("the logging note", func(ev Event) bool {
		return ev.Kind == EvNote && ev.Note == "logging/setLevel: the server did not declare the logging capability; sent anyway"
	})
	if err := s.c.SetLogLevel(ctx, "loud"); !errors.Is(err, ErrRemote) {
		t.Fatalf("an unknown level: %v", err)
	}
	if s.c.Undeclared(mcp.MethodToolsCall) != "" || s.c.Undeclared(mcp.MethodPing) != "" {
		t.Fatal("tools and ping need nothing undeclared")
	}
}

// A server that ignores params.task answers with a plain result: the task
// call ends with it, and a note says no task was created.
func TestTaskCallAnsweredWithoutATask(t *testing.T) {
	s := start(t, Options{Timeout: 5 * time.Second}, fixtureArgs{})
	s.init()
	res, _, err := s.c.CallToolTask(context.Background(), "echo", echoArgs("hi", 0), TaskOptions{TTL: time.Second})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "hi") {
		t.Fatalf("%+v %v", res, err)
	}
	s.waitFor("the note", func(ev Event) bool { return ev.Kind == EvNote && strings.Contains(ev.Note, "no task created") })
	s.waitFor("the capability note", func(ev Event) bool {
		return ev.Kind == EvNote && strings.Contains(ev.Note, "tasks.requests.tools.call")
	})
	for _, ev := range s.snapshot() {
		if ev.Kind == EvTask {
			t.Fatalf("a task event without a task: %+v", ev.Task)
		}
	}
	sent := s.frames(VerdictSent)
	last := string(sent[len(sent)-1].Raw)
	if !strings.Contains(last, `"task":{"ttl":1000}`) {
		t.Fatalf("params.task not sent: %s", last)
	}
}

func TestPollInterval(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		in   *int64
		want time.Duration
	}{{nil, DefaultPollInterval}, {ms(0), MinPollInterval}, {ms(250), 250 * time.Millisecond}, {ms(1 << 40), MaxPollInterval}} {
		if got := pollInterval(tc.in); got != tc.want {
			t.Errorf("%v: got %v", tc.in, got)
		}
	}
}

// Lists follow nextCursor over every page of a real server (the fixture
// pages resources, templates and prompts by --page-size).
func TestListPagination(t *testing.T) {
	s := start(t, Options{Timeout: 5 * time.Second}, fixtureArgs{extra: []string{"--page-size", "2"}})
	s.init()
	ctx := context.Background()
	res, err := s.c.ListResources(ctx)
	if err != nil || len(res) != 5 || res[4].URI != "fixture://resource/5" {
		t.Fatalf("%+v %v", res, err)
	}
	tpls, err := s.c.ListResourceTemplates(ctx)
	if err != nil || len(tpls) != 3 || tpls[2].URITemplate != "fixture://c{?q}" {
		t.Fatalf("%+v %v", tpls, err)
	}
	ps, err := s.c.ListPrompts(ctx)
	if err != nil || len(ps) != 4 || !ps[1].Arguments[0].Required || ps[0].Arguments[0].Required {
		t.Fatalf("%+v %v", ps, err)
	}
	count := map[string]int{}
	s.waitUntil("every page resolved", func(evs []Event) bool {
		clear(count)
		for _, ev := range evs {
			if ev.Kind == EvRequest && ev.Req.State == StateResolved {
				count[ev.Req.Method]++
			}
		}
		return count[mcp.MethodPromptsList] == 2
	})
	if count[mcp.MethodResourcesList] != 3 || count[mcp.MethodResourceTemplatesList] != 2 {
		t.Fatalf("pages: %v", count)
	}
	// The second page was asked for with the first page's cursor.
	var second string
	for _, f := range s.frames(VerdictSent) {
		if f.Msg.Method == mcp.MethodResourcesList && strings.Contains(string(f.Raw), `"cursor"`) {
			second = string(f.Raw)
			break
		}
	}
	if second == "" {
		t.Fatal("no resources/list with a cursor")
	}
	// Feature requests ask for progress, like tools/call, so the Pending
	// pane's bars and --timeout-reset-on-progress work for them.
	if !strings.Contains(second, `"_meta":{"progressToken":`) {
		t.Fatalf("no progress token: %s", second)
	}
}

// A feature request asks for progress: its progress shows as request
// events, and with ResetOnProgress each report restarts its deadline.
func TestFeatureProgress(t *testing.T) {
	ctx := context.Background()
	const slow = "fixture://progress/5/600" // 3s, a report every 600ms
	s := start(t, Options{Timeout: 2 * time.Second, ResetOnProgress: true, MaxTotalTimeout: 20 * time.Second}, fixtureArgs{})
	s.init()
	res, _, err := s.c.ReadResource(ctx, slow)
	if err != nil || *res.Contents[0].Text != "done 5 steps" {
		t.Fatalf("%+v %v", res, err)
	}
	s.waitUntil("the read's progress events", func(evs []Event) bool {
		n := 0
		for _, ev := range evs {
			if ev.Kind == EvRequest && ev.Req.Method == mcp.MethodResourcesRead && ev.Req.State == StateProgress && ev.Req.Progress.Total != nil && *ev.Req.Progress.Total == 5 {
				n++
			}
		}
		return n >= 4
	})
	if _, _, err := s.c.ReadResource(ctx, "fixture://nope"); err == nil || !strings.Contains(err.Error(), "-32002") {
		t.Fatalf("an unknown resource: %v", err)
	}

	plain := start(t, Options{Timeout: 2 * time.Second}, fixtureArgs{})
	plain.init()
	if _, _, err := plain.c.ReadResource(ctx, slow); !errors.Is(err, ErrTimeout) {
		t.Fatalf("without ResetOnProgress: %v", err)
	}
}
