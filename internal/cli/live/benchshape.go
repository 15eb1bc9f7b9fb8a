package live

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
)

// benchStage is a stretch of an open loop: over Duration the rate goes
// linearly From one rate To another (calls per second).
type benchStage struct {
	Duration time.Duration `json:"duration"`
	From     float64       `json:"from"`
	To       float64       `json:"to"`
}

// calls is how many calls the stage makes (its area under the rate).
func (s benchStage) calls() float64 { return (s.From + s.To) / 2 * s.Duration.Seconds() }

// dueTimes yields when each call of the stages is due, from the start:
// call i when the calls made so far (the area under the rate) reach i.
func dueTimes(stages []benchStage) iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		var off time.Duration
		done, i := 0.0, 0.0 // calls before this stage; the next call's number
		for _, s := range stages {
			d := s.Duration.Seconds()
			a, b := (s.To-s.From)/(2*d), s.From // calls(t) = a t² + b t
			for ; i-done < s.calls(); i++ {
				m := i - done
				var t float64
				if math.Abs(a) < 1e-12 {
					t = m / b
				} else {
					t = (-b + math.Sqrt(max(b*b+4*a*m, 0))) / (2 * a)
				}
				if !yield(off + time.Duration(min(t, d)*float64(time.Second))) {
					return
				}
			}
			off += s.Duration
			done += s.calls()
		}
	}
}

// maxRate bounds a rate; maxRateCalls the calls of a shape.
const (
	maxRate      = 1_000_000
	maxRateCalls = 10_000_000
)

// parseRate reads a rate: N/s (or N, per second), N/m. zero allows 0 (a
// stage's target).
func parseRate(s string, zero bool) (float64, error) {
	num, per := s, time.Second
	if n, unit, ok := strings.Cut(s, "/"); ok {
		num = n
		switch unit {
		case "s":
		case "m":
			per = time.Minute
		default:
			return 0, fmt.Errorf("rate %q: the unit is /s or /m", s)
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || !(f > 0 || zero && f == 0) {
		return 0, fmt.Errorf("rate %q: want calls per second above 0, as 200/s", s)
	}
	f = f * float64(time.Second) / float64(per)
	if f > maxRate {
		return 0, fmt.Errorf("rate %q: at most %d/s", s, maxRate)
	}
	return f, nil
}

// parseStages reads --stages: D:RATE,... each ramping from the last rate
// (0 at first).
func parseStages(s string) ([]benchStage, error) {
	var out []benchStage
	from := 0.0
	for part := range strings.SplitSeq(s, ",") {
		ds, rs, ok := strings.Cut(strings.TrimSpace(part), ":")
		d, err := time.ParseDuration(ds)
		if !ok || err != nil || d <= 0 || d > 24*time.Hour {
			return nil, fmt.Errorf("--stages: %q is not DURATION:RATE, as 30s:200", part)
		}
		to, err := parseRate(rs, true)
		if err != nil {
			return nil, fmt.Errorf("--stages: %v", err)
		}
		out = append(out, benchStage{Duration: d, From: from, To: to})
		from = to
	}
	return out, nil
}

// benchShape reads --rate, --duration and --stages: the stages of an
// open loop (nil for the closed loop of -n and -c) and the rate of
// --rate, with o.Calls and o.Concurrency set for them.
func benchShape(cmd *cobra.Command, o *BenchOptions) (float64, []benchStage, error) {
	var rate float64
	var stages []benchStage
	var err error
	switch {
	case o.Stages != "" && (o.Rate != "" || o.Duration != 0):
		return 0, nil, cmdutil.Usagef("--stages does not go with --rate or --duration")
	case o.Stages != "":
		stages, err = parseStages(o.Stages)
	case o.Rate == "" && o.Duration != 0:
		return 0, nil, cmdutil.Usagef("--duration goes with --rate")
	case o.Rate == "":
		return 0, nil, nil
	case o.Duration <= 0:
		return 0, nil, cmdutil.Usagef("--rate needs --duration (how long to send)")
	default:
		rate, err = parseRate(o.Rate, false)
		if err != nil {
			err = fmt.Errorf("--%v", err)
		}
		stages = []benchStage{{Duration: o.Duration, From: rate, To: rate}}
	}
	if err != nil {
		return 0, nil, cmdutil.Usagef(err.Error())
	}
	if cmd.Flags().Changed("calls") {
		return 0, nil, cmdutil.Usagef("-n does not go with --rate or --stages: they make the calls")
	}
	n := 0.0
	for _, s := range stages {
		n += s.calls()
	}
	if n > maxRateCalls {
		return 0, nil, cmdutil.Usagef(fmt.Sprintf("the load shape makes %.0f calls, at most %d", n, maxRateCalls))
	}
	o.Calls = 0
	for range dueTimes(stages) {
		o.Calls++
	}
	if o.Calls == 0 {
		return 0, nil, cmdutil.Usagef("the load shape makes no call")
	}
	if !cmd.Flags().Changed("concurrency") {
		o.Concurrency = 256
	}
	return rate, stages, nil
}
