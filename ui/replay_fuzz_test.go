package ui

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// FuzzReplayJump: whatever is typed in the replay's jump box (t: a time or
// #N; i: an id), from wherever the cursor is, the jump keeps the cursor in
// [0, len]; a time read is never negative, and a time at or past the end
// of the capture, or #N past its last event, lands at the end; an integer
// id is read as one; and the screen drawn after it is still its size with
// no control character from the text.
// sgr is the styling the screen holds; any other escape sequence is
// foreign.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

func FuzzReplayJump(f *testing.F) {
	rh := newReplayHarness(f, sampleCapture, 120, 40)
	n := rh.tl.Len()
	for _, s := range []struct {
		time bool
		from int
		text string
	}{
		{true, 0, "1.5s"}, {true, n, "0"}, {true, 3, "250ms"}, {true, 0, "2m3s"},
		{true, 0, "#3"}, {true, 0, "#-1"}, {true, 5, "#99999999999999999999"}, {true, 0, "# 2"},
		{true, 0, "soon"}, {true, 0, "-1s"}, {true, 0, "NaN"}, {true, 0, "+Inf"}, {true, 0, "  0.25  "},
		{true, 0, "\x1b]0;x\x07"}, {true, 0, "1e-12"}, {true, 0, "1e10"},
		{false, 0, "4"}, {false, 0, `"x"`}, {false, 0, `"unterminated`}, {false, n, "4"},
		{false, 0, ""}, {false, 0, "-9223372036854775808"}, {false, 0, "\x1b[2J\u009b"}, {false, 2, `"\u0000"`},
	} {
		f.Add(s.time, s.from, s.text)
	}
	f.Fuzz(func(t *testing.T, isTime bool, from int, text string) {
		rh.t = t
		rp := rh.m.rp
		rh.run(rh.m.rp.seek(from))
		if rp.pos != max(min(from, n), 0) {
			t.Fatalf("seek(%d) left the cursor at %d of %d", from, rp.pos, n)
		}
		k := "i"
		if isTime {
			k = "t"
		}
		rh.keys(k)
		rp.prompt.SetValue(text)
		rh.keys("enter")
		if rp.pos < 0 || rp.pos > n || rp.want != rp.pos || rp.loading {
			t.Fatalf("%s %q from %d: cursor at %d (want %d, loading %v) of %d", k, text, from, rp.pos, rp.want, rp.loading, n)
		}
		typed := strings.TrimSpace(rp.prompt.Value())
		if isTime {
			if num, ok := strings.CutPrefix(typed, "#"); ok {
				if e, err := strconv.Atoi(num); err == nil && e >= n && rp.pos != n {
					t.Fatalf("t %q: cursor at %d, want the end %d", text, rp.pos, n)
				}
			} else if d, err := parseOffset(typed); err == nil {
				if d < 0 {
					t.Fatalf("parseOffset(%q) = %v, negative", typed, d)
				}
				if d >= rh.tl.End() && rp.pos != n {
					t.Fatalf("t %q (%v, the end is %v): cursor at %d, want %d", text, d, rh.tl.End(), rp.pos, n)
				}
				if rp.hold < 0 || rp.hold > rh.tl.End() {
					t.Fatalf("t %q: clock held at %v, outside [0, %v]", text, rp.hold, rh.tl.End())
				}
			}
		} else if id, err := parseID(typed); err == nil {
			if v, perr := strconv.ParseInt(typed, 10, 64); perr == nil {
				if got, ok := id.Int64(); !ok || got != v {
					t.Fatalf("parseID(%q) = %v, want the integer %d", typed, id, v)
				}
			}
		} else if typed != "" && !strings.HasPrefix(typed, `"`) {
			t.Fatalf("parseID(%q): %v; bare text is a string id", typed, err)
		}
		v := rh.m.View().Content
		checkScreen(t, v, 120, 40)
		for _, r := range sgr.ReplaceAllString(v, "") {
			if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("%s %q: control %U on the screen", k, text, r)
			}
		}
	})
}
