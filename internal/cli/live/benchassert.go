package live

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/timeouts"
)

// A benchMetric is what a threshold of sonde bench --assert measures.
type benchMetric string

// The metrics.
const (
	metricP50        benchMetric = "p50"
	metricP95        benchMetric = "p95"
	metricP99        benchMetric = "p99"
	metricMax        benchMetric = "max"
	metricRate       benchMetric = "rate"       // calls per second
	metricErrors     benchMetric = "errors"     // calls that failed or returned isError
	metricLate       benchMetric = "late"       // answers after their call timed out or was cancelled
	metricDuplicate  benchMetric = "duplicate"  // second answers to one id
	metricUnknown    benchMetric = "unknown"    // answers to ids sonde never sent
	metricMismatched benchMetric = "mismatched" // answers that carry another call's --check-echo token
)

// benchMetrics are the metrics in the order they are documented; latency
// ones take a duration.
var benchMetrics = []benchMetric{metricP50, metricP95, metricP99, metricMax, metricRate, metricErrors, metricLate, metricDuplicate, metricUnknown, metricMismatched}

func (m benchMetric) latency() bool {
	return m == metricP50 || m == metricP95 || m == metricP99 || m == metricMax
}

// errThreshold is the error of an --assert that cannot be parsed.
var errThreshold = errors.New("bad --assert")

// Threshold is one --assert: METRIC OP VALUE.
type Threshold struct {
	Expr   string      `json:"assert"`
	Metric benchMetric `json:"metric"`
	Op     string      `json:"op"`
	// Limit is the value compared with: milliseconds for a latency, calls
	// per second for rate, a percentage of the calls for errors with %, a
	// count otherwise.
	Limit   float64 `json:"limit"`
	Percent bool    `json:"percent,omitempty"`
}

// ThresholdResult is a threshold checked: the value measured and whether
// it held.
type ThresholdResult struct {
	Threshold
	Value float64 `json:"value"`
	OK    bool    `json:"ok"`
}

// benchOps are the comparisons, longest first (so <= is not read as <).
var benchOps = []string{"<=", ">=", "==", "<", ">"}

// ParseThreshold reads an --assert: a metric (p50, p95, p99, max, rate,
// errors, late, duplicate, unknown, mismatched), a comparison (<, <=, ==,
// >=, >) and a value: a duration for a latency (500ms), a number, or for
// errors a percentage of the calls (1%).
func ParseThreshold(s string) (Threshold, error) {
	expr := strings.ReplaceAll(s, " ", "")
	for _, op := range benchOps {
		name, val, ok := strings.Cut(expr, op)
		if !ok {
			continue
		}
		th := Threshold{Expr: s, Metric: benchMetric(name), Op: op}
		known := false
		for _, m := range benchMetrics {
			known = known || m == th.Metric
		}
		if !known {
			return Threshold{}, fmt.Errorf("%w %q: unknown metric %q (want one of %s)", errThreshold, s, name, metricNames())
		}
		if err := th.parseLimit(val); err != nil {
			return Threshold{}, fmt.Errorf("%w %q: %v", errThreshold, s, err)
		}
		return th, nil
	}
	return Threshold{}, fmt.Errorf("%w %q: want METRIC OP VALUE, as p99<500ms or mismatched==0", errThreshold, s)
}

func metricNames() string {
	names := make([]string, len(benchMetrics))
	for i, m := range benchMetrics {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

func (th *Threshold) parseLimit(val string) error {
	if th.Metric.latency() {
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration (500ms, 1.5s)", val)
		}
		th.Limit = float64(d) / float64(time.Millisecond)
		return nil
	}
	if num, ok := strings.CutSuffix(val, "%"); ok {
		if th.Metric != metricErrors {
			return fmt.Errorf("only errors takes a percentage")
		}
		val, th.Percent = num, true
	}
	f, err := strconv.ParseFloat(val, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f > 1e15 {
		return fmt.Errorf("%q is not a number at least 0", val)
	}
	th.Limit = f
	return nil
}

// holds compares v with the limit.
func (th Threshold) holds(v float64) bool {
	switch th.Op {
	case "<":
		return v < th.Limit
	case "<=":
		return v <= th.Limit
	case "==":
		return v == th.Limit
	case ">=":
		return v >= th.Limit
	}
	return v > th.Limit
}

// value is what r measured for the threshold's metric.
func (th Threshold) value(r *BenchReport) float64 {
	switch th.Metric {
	case metricP50:
		return r.P50MS
	case metricP95:
		return r.P95MS
	case metricP99:
		return r.P99MS
	case metricMax:
		return r.MaxMS
	case metricRate:
		return r.CallsPerSec
	case metricErrors:
		n := float64(r.failed() + r.ToolErrors)
		if th.Percent {
			return 100 * n / float64(max(r.Calls, 1))
		}
		return n
	case metricLate:
		return float64(r.Late)
	case metricDuplicate:
		return float64(r.Duplicate)
	case metricUnknown:
		return float64(r.Unknown)
	}
	return float64(r.Mismatched)
}

// check checks every threshold against r.
func checkThresholds(ths []Threshold, r *BenchReport) []ThresholdResult {
	out := make([]ThresholdResult, 0, len(ths))
	for _, th := range ths {
		v := th.value(r)
		out = append(out, ThresholdResult{Threshold: th, Value: v, OK: th.holds(v)})
	}
	return out
}

// failed is how many calls failed with an error code.
func (r *BenchReport) failed() int {
	n := 0
	for _, k := range r.Errors {
		n += k
	}
	return n
}

// benchChecks are what bench checks beyond its counts: the thresholds and
// the echo of each call's token.
type benchChecks struct {
	thresholds []Threshold
	echo       *echoCheck
	rate       float64      // --rate, for the report
	stages     []benchStage // an open loop (--rate, --stages); nil: closed
	policies   []timeouts.Policy
}

// parseThresholds reads the --assert flags.
func parseThresholds(exprs []string) ([]Threshold, error) {
	var ths []Threshold
	for _, e := range exprs {
		th, err := ParseThreshold(e)
		if err != nil {
			return nil, cmdutil.Usagef(strings.TrimPrefix(err.Error(), errThreshold.Error()+" ") + " (see sonde bench --help)")
		}
		ths = append(ths, th)
	}
	return ths, nil
}

// thresholdStatus is exit status 1 naming the thresholds that failed, or
// nil when every one held.
func thresholdStatus(r BenchReport) error {
	var failed []string
	for _, t := range r.Thresholds {
		if !t.OK {
			failed = append(failed, fmt.Sprintf("%s (%s is %s)", t.Expr, t.Metric, t.valueText()))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &cmdutil.ExitStatus{Code: cmdutil.ExitToolError, Msg: "threshold failed: " + strings.Join(failed, ", ")}
}

// valueText is the measured value as the threshold is written.
func (t ThresholdResult) valueText() string {
	switch {
	case t.Metric.latency():
		return strconv.FormatFloat(t.Value, 'f', 3, 64) + "ms"
	case t.Percent:
		return strconv.FormatFloat(t.Value, 'f', 2, 64) + "%"
	case t.Metric == metricRate:
		return strconv.FormatFloat(t.Value, 'f', 1, 64)
	}
	return strconv.FormatFloat(t.Value, 'f', -1, 64)
}

// writeThresholds is the text of the counts by id and the thresholds.
func writeThresholds(w io.Writer, r BenchReport) {
	fmt.Fprintf(w, "  answers  late %d  duplicate %d  unknown %d", r.Late, r.Duplicate, r.Unknown)
	if r.EchoChecked {
		fmt.Fprintf(w, "  mismatched %d", r.Mismatched)
	}
	fmt.Fprintln(w)
	for _, t := range r.Thresholds {
		verdict := "ok  "
		if !t.OK {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s     %s (%s)\n", verdict, t.Expr, t.valueText())
	}
}
