package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/golden"
	"github.com/sonde-mcp/sonde/timeouts"
	"github.com/sonde-mcp/sonde/ui/theme"
)

func withPolicies(t *testing.T, specs ...string) opt {
	return func(o *Options) {
		for _, s := range specs {
			p, err := timeouts.ParsePolicy(s)
			if err != nil {
				t.Fatal(err)
			}
			o.Policies = append(o.Policies, p)
		}
	}
}

// TestPoliciesGolden: with Options.Policies, the Pending pane says which
// policies each call has outlived (the slow call, in flight 1.9s, is past
// a 1s timeout; with reset-on-progress its progress at 0.8s and 1.6s keeps
// it going), each settled call's verdicts, and the timeline (7) marks the
// deadlines; at the two reference sizes.
func TestPoliciesGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 36}} {
		for _, keys := range [][]string{nil, {"7"}} {
			name := fmt.Sprintf("policies_%dx%d", size[0], size[1])
			want := []string{"POLICY", "✗timeout=1s"}
			if keys != nil {
				name = fmt.Sprintf("policies_timeline_%dx%d", size[0], size[1])
				want = []string{"deadlines 1 timeout=1s", "┿1─", "━*━"}
			}
			t.Run(name, func(t *testing.T) {
				hs := newHarness(t, size[0], size[1], withPolicies(t, "timeout=1s", "timeout=1s,reset-on-progress"))
				hs.play()
				hs.press(keys...)
				got := hs.screen()
				for _, w := range want {
					if !strings.Contains(got, w) {
						t.Errorf("screen lacks %q", w)
					}
				}
				golden.Assert(t, name, got)
			})
		}
	}
	for _, e := range newPlayed(t).m.pending.Entries() {
		if e.Tool == "slow" && e.Latency == 0 {
			if len(e.Policies) != 2 || e.Policies[0].Result != timeouts.ResultFail || e.Policies[1].Result != timeouts.ResultPending {
				t.Errorf("the slow call in flight: %+v", e.Policies)
			}
			return
		}
	}
	t.Error("no slow call in flight")
}

func newPlayed(t *testing.T) *harness {
	hs := newHarness(t, 80, 24, withPolicies(t, "timeout=1s", "timeout=1s,reset-on-progress"))
	hs.play()
	return hs
}

// TestPoliciesViewSize: with policies, the screen is exactly its size at
// common and tiny sizes, in colour, with Pending or the timeline focused,
// in the history view too.
func TestPoliciesViewSize(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {120, 36}, {160, 45}, {60, 20}, {20, 8}} {
		for _, keys := range [][]string{nil, {"h"}, {"7"}} {
			hs := newHarness(t, size[0], size[1], withPolicies(t, "ts-sdk", "timeout=1s", "timeout=1s,reset-on-progress"), withPalette(theme.Dark(), false))
			hs.play()
			hs.press(keys...)
			checkScreen(t, hs.m.View().Content, size[0], size[1])
		}
	}
}
