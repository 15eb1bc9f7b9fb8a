package cmdutil

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/gate"
)

// Report formats of sonde lint and sonde check.
const (
	FormatText  = "text"
	FormatJSON  = "json"
	FormatJUnit = "junit"
	FormatSARIF = "sarif"
)

// GateFlags are the CI flags of sonde lint and sonde check: --format,
// --fail-on and --label.
type GateFlags struct {
	Format string
	FailOn string
	Label  string
	failOn gate.FailOn
}

// FailOnHelp explains --fail-on's kinds, for the help of lint and check.
const FailOnHelp = `--fail-on KINDS (comma-separated; all, none) chooses what fails the run (exit status 1):
  must, should      lint findings of that level (docs/lint.md)
  late, unknown, duplicate
                    responses with that verdict (late-response, unknown-id, duplicate-response)
  timeout           a request of sonde's that timed out
  error             a request answered with a JSON-RPC error (or ended by a broken protocol,
                    an exit, a failed HTTP exchange)
  tool-error        a tools/call result with isError
  drift             a tool definition that differs from the baseline accepted for the
                    server's label (sonde baseline accept; --label, default the server's name)
--format junit writes JUnit XML (a testsuite per session, a testcase per rule), --format
sarif a SARIF 2.1.0 log (the line of each frame in the capture as its location). docs/ci.md.`

// Register adds the flags; failOn is --fail-on's default.
func (g *GateFlags) Register(fs *pflag.FlagSet, failOn string) {
	fs.StringVar(&g.Format, "format", FormatText, "output: text, json, junit or sarif")
	fs.StringVar(&g.FailOn, "fail-on", failOn, "what fails the run: "+gate.KindList()+", all or none")
	fs.StringVar(&g.Label, "label", "", "the server label of the baseline for --fail-on drift (default: the server's name)")
}

// FailOnSet is --fail-on as Parse read it.
func (g *GateFlags) FailOnSet() gate.FailOn { return g.failOn }

// Parse checks --format (--json is --format json) and returns --fail-on.
func (g *GateFlags) Parse(asJSON bool) (gate.FailOn, error) {
	if asJSON {
		if g.Format != FormatText && g.Format != FormatJSON {
			return nil, Usagef("--json and --format " + g.Format + " disagree")
		}
		g.Format = FormatJSON
	}
	if !slices.Contains([]string{FormatText, FormatJSON, FormatJUnit, FormatSARIF}, g.Format) {
		return nil, Usagef(fmt.Sprintf("--format: unknown format %q (text, json, junit, sarif)", g.Format))
	}
	f, err := gate.ParseFailOn(g.FailOn)
	if err != nil {
		return nil, Usagef(err.Error())
	}
	g.failOn = f
	return f, nil
}

// Machine reports whether the format is JUnit or SARIF.
func (g *GateFlags) Machine() bool { return g.Format == FormatJUnit || g.Format == FormatSARIF }

// BaselineLabel is the label of a session's baseline: label when set, else
// the server's name.
func BaselineLabel(label string, s *diff.Shown) string {
	if label != "" {
		return label
	}
	return strings.TrimSpace(s.Server.Name)
}

// CheckDrift checks the collector's sessions against their baselines (in
// BaselinesDir) when failOn has drift.
func (g *GateFlags) CheckDrift(c *gate.Collector, failOn gate.FailOn) error {
	if !failOn[gate.Drift] {
		return nil
	}
	dir, err := BaselinesDir()
	if err != nil {
		return err
	}
	return c.CheckDrift(gate.Store{Dir: dir}, func(s *diff.Shown) string { return BaselineLabel(g.Label, s) })
}

// WriteMachine writes rep as JUnit or SARIF on env.Out.
func (g *GateFlags) WriteMachine(env *Env, rep *gate.Report) error {
	if g.Format == FormatJUnit {
		return rep.WriteJUnit(env.Out)
	}
	return rep.WriteSARIF(env.Out, VersionString())
}
