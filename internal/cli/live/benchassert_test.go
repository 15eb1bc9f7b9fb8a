package live

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in      string
		metric  benchMetric
		op      string
		limit   float64
		percent bool
	}{
		{"p99<500ms", metricP99, "<", 500, false},
		{"p50 <= 1.5s", metricP50, "<=", 1500, false},
		{"errors<1%", metricErrors, "<", 1, true},
		{"errors==0", metricErrors, "==", 0, false},
		{"mismatched==0", metricMismatched, "==", 0, false},
		{"rate>=1000", metricRate, ">=", 1000, false},
		{"late>0", metricLate, ">", 0, false},
	} {
		th, err := ParseThreshold(tc.in)
		if err != nil || th.Metric != tc.metric || th.Op != tc.op || th.Limit != tc.limit || th.Percent != tc.percent || th.Expr != tc.in {
			t.Errorf("%q: %+v %v", tc.in, th, err)
		}
	}
	for _, in := range []string{"", "p99", "p99<", "p99<fast", "p99<-1s", "latency<1s", "late<1%", "errors<x%", "errors<-1", "late==NaN", "late<Inf", "<5"} {
		if th, err := ParseThreshold(in); !errors.Is(err, errThreshold) {
			t.Errorf("%q: %+v %v, want errThreshold", in, th, err)
		}
	}
}

func TestThresholdsHold(t *testing.T) {
	r := BenchReport{Calls: 200, P99MS: 12.5, Errors: map[string]int{"MCP_TIMEOUT": 1}, ToolErrors: 1, Mismatched: 3, Late: 1}
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"p99<500ms", true}, {"p99<12.5ms", false}, {"p99<=12.5ms", true},
		{"errors<1%", false}, {"errors<=1%", true}, {"errors==2", true},
		{"mismatched==0", false}, {"late==1", true}, {"duplicate==0", true},
	} {
		th, err := ParseThreshold(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := checkThresholds([]Threshold{th}, &r)[0]; got.OK != tc.ok {
			t.Errorf("%s: %+v, want ok %v", tc.in, got, tc.ok)
		}
	}
}

// FuzzParseThreshold: nothing panics; what parses has a known metric, an
// operator and a limit at least 0.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"p99<500ms", "errors<1%", "mismatched==0", "rate>=10", "p50<=1h", "<<", "x==", "errors<1e400%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			if !errors.Is(err, errThreshold) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if th.Limit < 0 || th.Limit != th.Limit || th.Op == "" || th.Metric == "" {
			t.Fatalf("%q: %+v", s, th)
		}
	})
}

func TestEchoCheckMatches(t *testing.T) {
	e, err := newEchoCheck("value", []byte(`{"value":"x","delay_ms":0}`))
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal(e.argsFor(7), &args); err != nil || args["value"] != e.prefix+"7" || args["delay_ms"] != 0.0 {
		t.Fatalf("args: %v %v", args, err)
	}
	text := func(s string) json.RawMessage {
		return json.RawMessage(`{"content":[{"type":"text","text":` + strconv.Quote(s) + `}]}`)
	}
	for _, tc := range []struct {
		name   string
		result json.RawMessage
		ok     bool
	}{
		{"its own", text(e.prefix + "7"), true},
		{"its own, escaped", json.RawMessage(`{"content":[],"structuredContent":{"value":"\u0073` + e.prefix[1:] + `7"}}`), true},
		{"another's", text(e.prefix + "8"), false},
		{"a longer number", text(e.prefix + "71"), false},
		{"both", text(e.prefix + "7 " + e.prefix + "9"), false},
		{"none", text("x"), false},
		{"not a result", json.RawMessage(`[]`), false},
	} {
		if got := e.matches(7, tc.result); got != tc.ok {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.ok)
		}
	}
}
