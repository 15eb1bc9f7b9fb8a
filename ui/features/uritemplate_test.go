package features

import (
	"slices"
	"testing"
)

// Examples from RFC 6570 section 3.2 (values: var=value, hello=Hello
// World!, path=/foo/bar, x=1024, y=768, empty="").
func TestExpandTemplate(t *testing.T) {
	vals := map[string]string{"var": "value", "hello": "Hello World!", "path": "/foo/bar", "x": "1024", "y": "768", "empty": ""}
	for tpl, want := range map[string]string{
		"{var}":                    "value",
		"{hello}":                  "Hello%20World%21",
		"{+path}/here":             "/foo/bar/here",
		"here?ref={+path}":         "here?ref=/foo/bar",
		"X{#var}":                  "X#value",
		"X{.x,y}":                  "X.1024.768",
		"{/var,x}/here":            "/value/1024/here",
		"{;x,y,empty}":             ";x=1024;y=768;empty",
		"{?x,y,empty}":             "?x=1024&y=768&empty=",
		"?fixed=yes{&x}":           "?fixed=yes&x=1024",
		"{var:3}":                  "val",
		"{undef}":                  "",
		"demo://text/{resourceId}": "demo://text/",
		"file:///{+path}":          "file:////foo/bar",
		"{x,hello,y}":              "1024,Hello%20World%21,768",
	} {
		if got := ExpandTemplate(tpl, vals); got != want {
			t.Errorf("%s: got %q, want %q", tpl, got, want)
		}
	}
}

func TestTemplateVars(t *testing.T) {
	if got := TemplateVars("db://{schema}/{table}{?limit,schema}{/path*}{x:3}"); !slices.Equal(got, []string{"schema", "table", "limit", "path", "x"}) {
		t.Fatal(got)
	}
	if got := TemplateVars("plain://no/vars"); got != nil {
		t.Fatal(got)
	}
}
