package ui

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/sonde-mcp/sonde/ui/features"
	"github.com/sonde-mcp/sonde/ui/frames"
	"github.com/sonde-mcp/sonde/ui/pending"
	"github.com/sonde-mcp/sonde/ui/picker"
	"github.com/sonde-mcp/sonde/ui/sessions"
	"github.com/sonde-mcp/sonde/ui/stderr"
	"github.com/sonde-mcp/sonde/ui/timeline"
	"github.com/sonde-mcp/sonde/ui/tools"
)

// bindingsOf collects the key.Binding fields of a keymap struct, embedded
// structs included (a nested keymap field, like Tools' form, is not: its
// keys are documented in prose).
func bindingsOf(km any) []key.Binding {
	var out []key.Binding
	v := reflect.ValueOf(km)
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch {
		case f.Type() == reflect.TypeOf(key.Binding{}):
			out = append(out, f.Interface().(key.Binding))
		case v.Type().Field(i).Anonymous && f.Kind() == reflect.Struct:
			out = append(out, bindingsOf(f.Interface())...)
		}
	}
	return out
}

// docSections maps the "## " headings of docs/keys.md to the keys named in
// the first column of their tables, split into words.
func docSections(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/keys.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	var cur map[string]bool
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = map[string]bool{}
			out[h] = cur
			continue
		}
		if cur == nil || !strings.HasPrefix(line, "| ") {
			continue
		}
		first := strings.SplitN(line[2:], " |", 2)[0]
		for _, w := range strings.FieldsFunc(first, func(r rune) bool { return strings.ContainsRune(" /()", r) }) {
			if w != "," {
				w = strings.TrimRight(w, ",")
			}
			cur[w] = true
		}
	}
	return out
}

// TestKeysDocMatchesKeymaps: every key of every keymap is in the table of
// its section of docs/keys.md (with the name its help gives it).
func TestKeysDocMatchesKeymaps(t *testing.T) {
	sections := docSections(t)
	lessonKeys := defaultKeyMap()
	for _, tc := range []struct {
		section string
		keys    []key.Binding
	}{
		{"Everywhere", bindingsOf(defaultKeyMap())},
		{"Replay (sonde replay FILE)", bindingsOf(defaultReplayKeys())},
		{"1 Pending", bindingsOf(pending.DefaultKeyMap())},
		{"2 Frames", bindingsOf(frames.DefaultKeyMap())},
		{"3 Tools", bindingsOf(tools.DefaultKeyMap())},
		{"4 stderr", bindingsOf(stderr.DefaultKeyMap())},
		{"5 Lesson (sonde demo)", []key.Binding{lessonKeys.LessonNext, lessonKeys.FIFO}},
		{"6 Features (resources, prompts, log)", bindingsOf(features.DefaultKeyMap())},
		{"7 Timeline", bindingsOf(timeline.DefaultKeyMap())},
		{"The server picker", bindingsOf(picker.DefaultKeyMap())},
		{"sonde watch", bindingsOf(sessions.DefaultKeyMap())},
	} {
		words, ok := sections[tc.section]
		if !ok {
			t.Errorf("docs/keys.md has no section %q", tc.section)
			continue
		}
		if len(tc.keys) == 0 {
			t.Errorf("%s: no bindings found", tc.section)
		}
		for _, b := range tc.keys {
			if tc.section == "Everywhere" && (b.Help().Desc == lessonKeys.LessonNext.Help().Desc || b.Help().Desc == lessonKeys.FIFO.Help().Desc) {
				continue // the lesson's, in its own section
			}
			for _, k := range strings.Split(b.Help().Key, "/") {
				if k != "" && !words[k] {
					t.Errorf("docs/keys.md, %s: the key %q (%s) is not in the table", tc.section, k, b.Help().Desc)
				}
			}
		}
	}
}

// TestKeysDocCheckFails shows the check failing on a key the page does
// not name.
func TestKeysDocCheckFails(t *testing.T) {
	words := docSections(t)["1 Pending"]
	if words["ctrl+q"] || !words["c"] {
		t.Fatalf("section words: %v", words)
	}
}
