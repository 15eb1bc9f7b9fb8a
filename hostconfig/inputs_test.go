package hostconfig

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/paths"
)

// inputServer reads one server of testdata/inputs/mcp.json.
func inputServer(t *testing.T, name string) Server {
	t.Helper()
	return server(t, "inputs/mcp.json", paths.VSCode, paths.Project, name)
}

// cannotAsk is a Prompter without a terminal.
type cannotAsk struct{ asked []string }

func (c *cannotAsk) Prompt(in Input) (string, error) {
	c.asked = append(c.asked, in.ID)
	return "", fmt.Errorf("%w: stdin is not a terminal", ErrCannotAsk)
}

// TestParseInputs: promptString and pickString inputs, options written
// as strings or as {label, value} objects, defaults, and the types sonde
// cannot ask for, kept as written.
func TestParseInputs(t *testing.T) {
	got := inputServer(t, "api").Inputs()
	want := []Input{
		{ID: "token", Type: PromptString, Description: "API token", Password: true},
		{ID: "user", Type: PromptString, Description: "User name", Default: "ada"},
		{ID: "region", Type: PickString, Description: "Cloud region", Default: "us-east-1",
			Options: []Option{{Value: "eu-west-1"}, {Value: "us-east-1"}, {Value: "ap-south-1"}}},
		{ID: "tier", Type: PickString, Description: "Plan",
			Options: []Option{{Label: "Free plan", Value: "free"}, {Value: "pro"}, {Value: "team"}}},
		{ID: "branch", Type: "command"},
		{ID: "color", Type: "colorPicker", Description: "Colour"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inputs:\n got %+v\nwant %+v", got, want)
	}
	for _, in := range got {
		asks := in.Type == PromptString || in.Type == PickString
		if in.CanAsk() != asks || in.IsChoice() != (in.Type == PickString) {
			t.Errorf("%s: CanAsk %v IsChoice %v", in.ID, in.CanAsk(), in.IsChoice())
		}
	}
	if s := (Option{Label: "Free plan", Value: "free"}).Text(); s != "Free plan (free)" {
		t.Errorf("option text %q", s)
	}
	if s := (Option{Value: "pro"}).Text(); s != "pro" {
		t.Errorf("option text %q", s)
	}
}

// TestBadPickStrings: each malformed input is a reason of one problem of
// the file; a pickString without usable options is kept (asked as text),
// a bad option is dropped, a default that is not an option is ignored.
func TestBadPickStrings(t *testing.T) {
	file := abs(t, "broken/bad-pickstring.json")
	servers, problems := ReadFile(file, paths.VSCode, paths.User, "")
	checkLines(t, "problems", problemLines(t, problems), []string{
		`broken/bad-pickstring.json: wrong shape: ` + strings.Join([]string{
			`input "no-options": a pickString needs "options" (it is asked as text)`,
			`input "options-string": "options" is a string, want an array of strings or of objects with "label" and "value" (it is asked as text)`,
			`input "some-bad": option 1 is a number, want a string or an object with a string "value" and an optional string "label"`,
			`input "some-bad": option 2 is an object, want a string or an object with a string "value" and an optional string "label"`,
			`input "some-bad": option 4 is an object, want a string or an object with a string "value" and an optional string "label"`,
			`input "empty": a pickString needs "options" (it is asked as text)`,
			`input "bad-default": "default" "z" is not one of its options (the default is ignored)`,
			`input 6 is not an object with string "id", "type", "description", "default" and boolean "password"`,
		}, "; "),
	})
	if len(problems) != 1 || !errors.Is(problems[0].Err, ErrShape) {
		t.Fatalf("want one ErrShape problem, got %q", problemLines(t, problems))
	}
	if len(servers) != 1 {
		t.Fatalf("servers %d, want 1", len(servers))
	}
	var ids []string
	byID := map[string]Input{}
	for _, in := range servers[0].Inputs() {
		ids = append(ids, in.ID)
		byID[in.ID] = in
	}
	if want := []string{"no-options", "options-string", "some-bad", "empty", "bad-default", "fine"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("inputs kept %q, want %q", ids, want)
	}
	if in := byID["no-options"]; in.IsChoice() || !in.CanAsk() {
		t.Errorf("no-options: %+v, want asked as text", in)
	}
	if got := byID["some-bad"].Options; !reflect.DeepEqual(got, []Option{{Value: "ok"}, {Label: "Fine", Value: "fine"}}) {
		t.Errorf("some-bad options %+v", got)
	}
	if in := byID["bad-default"]; in.Default != "" || len(in.Options) != 2 {
		t.Errorf("bad-default %+v, want its options and no default", in)
	}
	// The text input takes any answer; the choices only their options.
	p := &answers{values: map[string]string{"no-options": "anything", "some-bad": "fine", "bad-default": "y"}}
	r, err := servers[0].Resolve(Env{Prompter: p})
	if err != nil || strings.Join(r.Args, " ") != "anything fine y" {
		t.Errorf("resolved %q, %v", r.Args, err)
	}
}

// TestResolvePickString: a pickString's answer is one of its option
// values; an empty answer takes the default; the Prompter is given the
// options; an answer that is not an option fails.
func TestResolvePickString(t *testing.T) {
	s := inputServer(t, "api")
	p := &answers{values: map[string]string{"region": "", "tier": "free", "token": "s3cret", "user": ""}}
	r, err := s.Resolve(Env{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://us-east-1.example.com/mcp?tier=free" {
		t.Errorf("url %q", r.URL)
	}
	if r.Headers["Authorization"] != "Bearer s3cret" || r.Headers["X-User"] != "ada" {
		t.Errorf("headers %q", r.Headers)
	}
	var asked []string
	for _, in := range p.asked {
		asked = append(asked, fmt.Sprintf("%s:%d", in.ID, len(in.Options)))
	}
	if want := []string{"region:3", "tier:3", "token:0", "user:0"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %q, want %q (each once, in the order of the fields, with the options)", asked, want)
	}
	if got := r.Secrets(); !reflect.DeepEqual(got, []string{"s3cret"}) {
		t.Errorf("secrets %q, want the password input's value only (the pickStrings are choices, user's default \"ada\" is shorter than MinSecretLen)", got)
	}
	if len(s.Secrets()) != 0 {
		t.Errorf("the unresolved server has secrets %q", s.Secrets())
	}

	p = &answers{values: map[string]string{"region": "mars-1", "tier": "free", "token": "x", "user": "x"}}
	_, err = s.Resolve(Env{Prompter: p})
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNotAnOption) || !errors.Is(err, ErrReference) || ie.Input.ID != "region" || ie.Given {
		t.Fatalf("answer not an option: %v", err)
	}
	if want := `url: ${input:region}: input "region" ("Cloud region"): the answer: "mars-1" is not one of its options ("eu-west-1", "us-east-1", "ap-south-1")`; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error\n got %v\nwant …%s", err, want)
	}
}

// TestResolveGivenInputs: values given (--input) are used without asking,
// a pickString's must be one of its options, and they supply the inputs
// sonde cannot ask for.
func TestResolveGivenInputs(t *testing.T) {
	api, builder, painter := inputServer(t, "api"), inputServer(t, "builder"), inputServer(t, "painter")
	p := &answers{values: map[string]string{"user": "bob"}}
	r, err := api.Resolve(Env{Prompter: p, Inputs: map[string]string{"region": "ap-south-1", "tier": "team", "token": "tok-given", "unused": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://ap-south-1.example.com/mcp?tier=team" || r.Headers["Authorization"] != "Bearer tok-given" || r.Headers["X-User"] != "bob" {
		t.Errorf("resolved %q %q", r.URL, r.Headers)
	}
	if len(p.asked) != 1 || p.asked[0].ID != "user" {
		t.Errorf("asked %+v, want only user", p.asked)
	}
	if got := r.Secrets(); !reflect.DeepEqual(got, []string{"tok-given"}) {
		t.Errorf("secrets %q", got)
	}

	_, err = api.Resolve(Env{Prompter: p, Inputs: map[string]string{"region": "eu-west-1", "tier": "gold"}})
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNotAnOption) || !ie.Given {
		t.Fatalf("given value not an option: %v", err)
	}
	if want := `input "tier" ("Plan"): --input tier: "gold" is not one of its options ("free", "pro", "team")`; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error\n got %v\nwant …%s", err, want)
	}

	for _, tc := range []struct {
		s    Server
		want string
	}{
		{builder, `args[1]: ${input:branch}: input "branch" has type "command", which runs a VS Code command: sonde cannot ask for it; give its value with --input branch=VALUE`},
		{painter, `args[0]: ${input:color}: input "color" ("Colour") has type "colorPicker", which VS Code does not have: sonde cannot ask for it; give its value with --input color=VALUE`},
	} {
		// Neither asked nor checked without a value: an error naming the
		// file, the server, the input and its type.
		for _, env := range []Env{{Prompter: p}, {}} {
			_, err := tc.s.Resolve(env)
			var pr *Problem
			if !errors.As(err, &pr) || !errors.Is(err, ErrInputType) || pr.File != abs(t, "inputs/mcp.json") || pr.Server != tc.s.Name {
				t.Errorf("%s (prompter %v): %v", tc.s.Name, env.Prompter != nil, err)
			} else if !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("%s:\n got %v\nwant …%s", tc.s.Name, err, tc.want)
			}
		}
	}
	r, err = builder.Resolve(Env{Prompter: p, Inputs: map[string]string{"branch": "main"}})
	if err != nil || strings.Join(r.Args, " ") != "--branch main" {
		t.Errorf("builder with --input: %q, %v", r.Args, err)
	}
	if _, err := builder.Resolve(Env{Inputs: map[string]string{"branch": "main"}}); err != nil {
		t.Errorf("check of builder with --input: %v", err)
	}
	if _, err := api.Resolve(Env{Inputs: map[string]string{"region": "mars-1"}}); !errors.Is(err, ErrNotAnOption) {
		t.Errorf("check of a bad given value: %v", err)
	}
}

// TestResolveCannotAsk: without a way to ask, an input takes its default;
// one without a default fails with a message naming the input, its
// description and the flag to give it with.
func TestResolveCannotAsk(t *testing.T) {
	api := inputServer(t, "api")
	p := &cannotAsk{}
	r, err := api.Resolve(Env{Prompter: p, Inputs: map[string]string{"tier": "pro", "token": "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != "https://us-east-1.example.com/mcp?tier=pro" || r.Headers["X-User"] != "ada" {
		t.Errorf("defaults not taken: %q %q", r.URL, r.Headers)
	}
	_, err = api.Resolve(Env{Prompter: p, Inputs: map[string]string{"tier": "pro"}})
	var ie *InputError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNoValue) || !errors.Is(err, ErrCannotAsk) || ie.Input.ID != "token" {
		t.Fatalf("no value: %v", err)
	}
	want := abs(t, "inputs/mcp.json") + `: server "api": unresolved reference: headers.Authorization: ${input:token}: input "token" ("API token") needs a value and has no default, and sonde cannot ask: stdin is not a terminal; give its value with --input token=VALUE`
	if err.Error() != want {
		t.Errorf("error\n got %v\nwant %s", err, want)
	}
	// A pickString without a default cannot be skipped either.
	_, err = api.Resolve(Env{Prompter: p, Inputs: map[string]string{"token": "t"}})
	if !errors.Is(err, ErrNoValue) || !strings.Contains(err.Error(), `input "tier" ("Plan") needs a value`) {
		t.Errorf("tier without a value: %v", err)
	}
}

// TestChoice: an answer picks an option by number, value or label; an
// empty answer picks the default; anything else picks nothing.
func TestChoice(t *testing.T) {
	api := inputServer(t, "api")
	region, _ := api.input("region")
	tier, _ := api.input("tier")
	for _, tc := range []struct {
		in     Input
		answer string
		want   string
		ok     bool
	}{
		{region, "1", "eu-west-1", true},
		{region, " 3 ", "ap-south-1", true},
		{region, "us-east-1", "us-east-1", true},
		{region, "", "us-east-1", true},
		{region, "0", "", false},
		{region, "4", "", false},
		{region, "mars", "", false},
		{tier, "Free plan", "free", true},
		{tier, "free", "free", true},
		{tier, "2", "pro", true},
		{tier, "", "", false},
	} {
		got, ok := tc.in.Choice(tc.answer)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s.Choice(%q) = %q, %v; want %q, %v", tc.in.ID, tc.answer, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCheckInputValues: every id given must be an input of the file, and a
// pickString's value one of its options; a password's value is never in
// the message.
func TestCheckInputValues(t *testing.T) {
	api := inputServer(t, "api")
	if err := api.CheckInputValues(map[string]string{"region": "eu-west-1", "token": "x", "branch": "main"}); err != nil {
		t.Errorf("good values: %v", err)
	}
	for _, tc := range []struct {
		s      Server
		values map[string]string
		is     error
		want   string
	}{
		{api, map[string]string{"regoin": "eu-west-1", "zzz": "1"}, ErrUnknownInput,
			`--input regoin: the file has no input "regoin" (its inputs: token, user, region, tier, branch, color)`},
		{server(t, "project/.mcp.json", paths.ClaudeCode, paths.Project, "sentry"), map[string]string{"x": "1"}, ErrUnknownInput,
			`--input x: the file has no "inputs"`},
		{api, map[string]string{"region": "mars-1"}, ErrNotAnOption,
			`input "region" ("Cloud region"): --input region: "mars-1" is not one of its options ("eu-west-1", "us-east-1", "ap-south-1")`},
		{Server{inputs: []Input{{ID: "pw", Type: PickString, Password: true, Options: []Option{{Value: "a"}}}}}, map[string]string{"pw": "hunter2"}, ErrNotAnOption,
			`input "pw": --input pw: the value is not one of its options ("a")`},
	} {
		err := tc.s.CheckInputValues(tc.values)
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, tc.is) || err.Error() != tc.want {
			t.Errorf("CheckInputValues(%v):\n got %v\nwant %s", tc.values, err, tc.want)
		}
	}
}
