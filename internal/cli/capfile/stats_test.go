package capfile_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/sonde-mcp/sonde/internal/cli/clitest"
)

func TestStatsCommand(t *testing.T) {
	path := recordCall(t)
	r := clitest.RunSonde(t, "", "stats", path)
	if r.Code != 0 || !strings.Contains(r.Stdout, "tools/call echo         1         0") || !strings.Contains(r.Stdout, "at most 1 in flight") {
		t.Errorf("stats: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunSonde(t, "", "stats", "--json", "--bucket", "1s", path)
	var rep struct {
		Requests int
		Methods  []struct {
			Method, Tool  string
			Count, Errors int
			P50, Max      int64
		}
		Concurrency struct {
			Max      int
			Bucket   int64
			InFlight []int `json:"in_flight"`
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 {
		t.Fatalf("stats --json: %d %v %s", r.Code, err, r.Stdout)
	}
	if rep.Requests != 2 || len(rep.Methods) != 2 || rep.Methods[1].Tool != "echo" || rep.Methods[1].P50 <= 0 ||
		rep.Concurrency.Max != 1 || rep.Concurrency.Bucket != 1e9 || len(rep.Concurrency.InFlight) == 0 {
		t.Errorf("stats --json: %+v", rep)
	}
	if r := clitest.RunSonde(t, "", "stats", "--bucket", "-1s", path); r.Code != 2 {
		t.Errorf("negative bucket: %d", r.Code)
	}
}

// TestStatsContextCost: the cost of each tool of a real capture: the
// definitions of a tools listing (the largest first, in both outputs) and
// the results of a call.
func TestStatsContextCost(t *testing.T) {
	r := clitest.RunSonde(t, "", "stats", recordTools(t))
	if r.Code != 0 || !strings.Contains(r.Stdout, "\ncontext cost (bytes, not tokens): tool definitions ") ||
		!strings.Contains(r.Stdout, "\ntool           definition  description        input       output        calls      results\n") {
		t.Errorf("stats of a listing: %d\n%s", r.Code, r.Stdout)
	}
	r = clitest.RunSonde(t, "", "stats", "--json", recordCall(t))
	var rep struct {
		Context []struct {
			Name    string
			Def     int `json:"definition_bytes"`
			Calls   int
			Results int `json:"result_bytes"`
		} `json:"context_cost"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Context) != 1 {
		t.Fatalf("%v %s", err, r.Stdout)
	}
	// The fixture's echo result: {"content":[{"type":"text","text":"hi"}],"structuredContent":{"value":"hi"}}.
	if c := rep.Context[0]; c.Name != "echo" || c.Def != 0 || c.Calls != 1 || c.Results < len(`{"content":[{"type":"text","text":"hi"}]}`) {
		t.Errorf("cost of a call: %+v", c)
	}
}

// TestStatsCountsIsError: a call whose result has isError is an error in
// sonde stats (client.Errored), and --filter status:error keeps it.
func TestStatsCountsIsError(t *testing.T) {
	path, _ := record(t, "", []string{"call", "tool-error", "--args", `{"message":"the tool failed"}`})
	for _, args := range [][]string{{"stats", path}, {"stats", "--filter", "status:error", path}} {
		r := clitest.RunSonde(t, "", args...)
		if r.Code != 0 || !regexp.MustCompile(`tools/call tool-error\s+1\s+1\s`).MatchString(r.Stdout) {
			t.Errorf("%v: %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
}
