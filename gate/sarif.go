package gate

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
)

// SARIFSchema is the $schema of the logs WriteSARIF writes.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string         `json:"id"`
	ShortDescription     sarifText      `json:"shortDescription"`
	Help                 sarifText      `json:"help"`
	DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties,omitempty"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifInvocation struct {
	ExecutionSuccessful bool   `json:"executionSuccessful"`
	CommandLine         string `json:"commandLine,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	Physical *sarifPhysical `json:"physicalLocation,omitempty"`
	Logical  []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	Artifact sarifArtifact `json:"artifactLocation"`
	Region   *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// InformationURI is where a SARIF viewer sends a reader for sonde.
const InformationURI = "https://github.com/sonde-mcp/sonde"

// WriteSARIF writes the report as a SARIF 2.1.0 log: one run, every rule
// checked as a rule of the driver (its level: "error" for MUST rules and
// contracts, "warning" for SHOULD rules and outcomes), and each result with
// its level ("error" when it fails the run under FailOn, else the rule's
// level, "warning" at most), its message, and its location: the capture
// (Artifact) and the line of its frame in it when there is one (every
// result then has a file, which GitHub code scanning requires), and the
// method as a logical location. version is sonde's.
func (r *Report) WriteSARIF(w io.Writer, version string) error {
	rules := r.rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "sonde", Version: version, InformationURI: InformationURI, Rules: []sarifRule{}}
	for i, ri := range rules {
		index[ri.ID] = i
		props := map[string]any{}
		if len(ri.Kinds) > 0 {
			kinds := make([]string, len(ri.Kinds))
			for j, k := range ri.Kinds {
				kinds[j] = string(k)
			}
			props["fail-on"] = kinds
		}
		driver.Rules = append(driver.Rules, sarifRule{ID: ri.ID, ShortDescription: sarifText{ri.Summary}, Help: sarifText{ri.Help}, DefaultConfiguration: sarifConfig{ri.Level}, Properties: props})
	}
	run := sarifRun{Tool: sarifTool{Driver: driver}, Invocations: []sarifInvocation{{ExecutionSuccessful: true, CommandLine: r.Command + " " + r.Target}}, Results: []sarifResult{}}
	for si, s := range r.Sessions {
		for _, res := range s.Results {
			ri, ok := s.Rule(res.Rule)
			if !ok {
				continue
			}
			level := ri.Level
			if r.FailOn.Fails(ri) {
				level = "error"
			} else if len(ri.Kinds) > 0 && level == "error" {
				level = "warning"
			}
			sr := sarifResult{RuleID: res.Rule, RuleIndex: index[res.Rule], Level: level, Message: sarifText{res.Message},
				Properties: map[string]any{"session": si + 1, "sessionName": s.Name}}
			if res.Seq > 0 {
				sr.Properties["event"] = res.Seq
			}
			if res.ID != "" {
				sr.Properties["id"] = res.ID
			}
			var loc sarifLocation
			if r.Artifact != "" {
				loc.Physical = &sarifPhysical{Artifact: sarifArtifact{URI: filepath.ToSlash(r.Artifact)}}
				if res.Line > 0 {
					loc.Physical.Region = &sarifRegion{StartLine: res.Line}
				}
			}
			if res.Method != "" {
				loc.Logical = []sarifLogical{{Name: res.Method, Kind: "function"}}
			}
			if loc.Physical != nil || loc.Logical != nil {
				sr.Locations = []sarifLocation{loc}
			}
			run.Results = append(run.Results, sr)
		}
	}
	b, err := json.MarshalIndent(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}}, "", "  ")
	if err != nil {
		return fmt.Errorf("sarif: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
