package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sonde-mcp/sonde/diff"
	"github.com/sonde-mcp/sonde/mcp"
)

// BaselineFormat is the "format" field of a baseline file.
const BaselineFormat = "sonde-baseline/1"

// maxBaselineBytes bounds a baseline file read back.
const maxBaselineBytes = 64 << 20

// ErrNoBaseline: no baseline was accepted for the label.
var ErrNoBaseline = errors.New("no baseline accepted")

// BaselineTool is one trusted tool definition.
type BaselineTool struct {
	Name string          `json:"name"`
	Def  json.RawMessage `json:"definition"`
}

// Baseline is the tool definitions accepted for one server label.
type Baseline struct {
	Format   string             `json:"format"`
	Label    string             `json:"label"`
	Accepted time.Time          `json:"accepted"`
	Server   mcp.Implementation `json:"server"`
	// From says where the definitions were read (a capture file).
	From  string         `json:"from,omitempty"`
	Tools []BaselineTool `json:"tools"`
}

// NewBaseline makes a baseline of the tools a session listed.
func NewBaseline(label, from string, s *diff.Shown, now time.Time) *Baseline {
	b := &Baseline{Format: BaselineFormat, Label: label, Accepted: now.UTC(), Server: s.Server, From: from, Tools: []BaselineTool{}}
	for _, it := range s.Tools {
		b.Tools = append(b.Tools, BaselineTool{Name: it.Key, Def: it.Def})
	}
	return b
}

// Items returns the tools as diff items.
func (b *Baseline) Items() []diff.Item {
	out := make([]diff.Item, len(b.Tools))
	for i, t := range b.Tools {
		out[i] = diff.Item{Key: t.Name, Def: t.Def}
	}
	return out
}

// Store keeps baselines as files in a folder, one per label.
type Store struct{ Dir string }

// fileName maps a label to a file name: letters, digits, '.', '-' and '_'
// are kept, every other byte is %XX (so distinct labels never share a
// file, and none escapes the folder); the empty label is "%" (which no
// other label's name is).
func fileName(label string) string {
	if label == "" {
		return "%.json"
	}
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		ch := label[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '_', ch == '.' && i > 0:
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String() + ".json"
}

// Path is the file of label's baseline.
func (s Store) Path(label string) string { return filepath.Join(s.Dir, fileName(label)) }

// Load reads label's baseline; ErrNoBaseline (wrapped) when there is none.
func (s Store) Load(label string) (*Baseline, error) {
	p := s.Path(label)
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w for %q (sonde baseline accept)", ErrNoBaseline, label)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b Baseline
	d := json.NewDecoder(&limited{f, maxBaselineBytes})
	if err := d.Decode(&b); err != nil {
		return nil, fmt.Errorf("baseline %s: %v", p, err)
	}
	if b.Format != BaselineFormat {
		return nil, fmt.Errorf("baseline %s: format %q, want %q", p, b.Format, BaselineFormat)
	}
	return &b, nil
}

// Save writes b (mode 0600, its folder 0700), replacing the label's
// previous baseline at once (a temporary file renamed over it).
func (s Store) Save(b *Baseline) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return "", err
	}
	p := s.Path(b.Label)
	tmp, err := os.CreateTemp(s.Dir, ".baseline-*")
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return p, nil
}

// Reset removes label's baseline; ErrNoBaseline (wrapped) when there is
// none.
func (s Store) Reset(label string) error {
	err := os.Remove(s.Path(label))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w for %q", ErrNoBaseline, label)
	}
	return err
}

// List returns the labels that have a baseline, sorted.
func (s Store) List() ([]*Baseline, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Baseline
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f, err := os.Open(filepath.Join(s.Dir, e.Name()))
		if err != nil {
			continue
		}
		var b Baseline
		err = json.NewDecoder(&limited{f, maxBaselineBytes}).Decode(&b)
		f.Close()
		if err == nil && b.Format == BaselineFormat {
			out = append(out, &b)
		}
	}
	slices.SortFunc(out, func(a, b *Baseline) int { return strings.Compare(a.Label, b.Label) })
	return out, nil
}

// limited reads at most n bytes, then fails (a baseline that is not one).
type limited struct {
	f interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("file larger than %d bytes", maxBaselineBytes)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// DriftResults compares the tools a session listed with a baseline: one
// result per changed field, added tool or removed tool. A tool whose hints
// changed toward harm says so first ("a read-only tool turned
// destructive"). seq and line locate the session's tool listing.
func DriftResults(b *Baseline, s *diff.Shown, seq uint64, line int) []Result {
	var out []Result
	for _, ch := range diff.CompareItems(diff.SectionTool, b.Items(), s.Tools, diff.NormalizeTool) {
		var msg string
		switch {
		case ch.Field == "" && ch.Kind == diff.Added:
			msg = fmt.Sprintf("tool %s was added after the baseline of %s", ch.Key, b.Accepted.Format(time.RFC3339))
		case ch.Field == "" && ch.Kind == diff.Removed:
			msg = fmt.Sprintf("tool %s was removed since the baseline of %s", ch.Key, b.Accepted.Format(time.RFC3339))
		default:
			msg = fmt.Sprintf("tool %s: %s %s: %s → %s", ch.Key, ch.Field, ch.Kind, orNone(ch.Old), orNone(ch.New))
			if ch.Note != "" {
				msg = fmt.Sprintf("tool %s: %s (%s %s → %s)", ch.Key, ch.Note, ch.Field, orNone(ch.Old), orNone(ch.New))
			}
			switch {
			case ch.Drift == diff.DriftLoosened:
				msg += " (loosened: the tool now claims less harm, and a host may stop asking before it runs)"
			case ch.Drift == diff.DriftTightened && ch.Note == "":
				msg += " (tightened)"
			}
		}
		out = append(out, Result{Rule: RuleDrift, Message: msg, Seq: seq, Line: line, Method: mcp.MethodToolsList})
	}
	// The rug-pulls first: they are why the gate exists.
	slices.SortStableFunc(out, func(a, b Result) int {
		ra, rb := strings.Contains(a.Message, "turned destructive"), strings.Contains(b.Message, "turned destructive")
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// CheckDrift compares every session that listed tools with the baseline
// of its label (label(view) names it): each session is then checked
// against the drift rule, with a result per change; a session whose label
// has no baseline skips the rule, saying why. It returns the first error
// other than a missing baseline.
func (c *Collector) CheckDrift(store Store, label func(*diff.Shown) string) error {
	drift := GateRules()[3]
	for i, s := range c.rep.Sessions {
		v := c.views[i]
		if !v.Listed["tools"] {
			continue
		}
		s.Checked = append(slices.Clone(s.Checked), drift)
		l := label(v)
		b, err := store.Load(l)
		if errors.Is(err, ErrNoBaseline) {
			if s.Skipped == nil {
				s.Skipped = map[string]string{}
			}
			s.Skipped[RuleDrift] = err.Error()
			continue
		}
		if err != nil {
			return err
		}
		var seq uint64
		if len(v.Tools) > 0 {
			seq = v.Tools[0].Seq
		}
		s.Results = append(s.Results, DriftResults(b, v, seq, c.toolsLine[i])...)
	}
	return nil
}
