package capfile_test

import (
	"encoding/json"
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
