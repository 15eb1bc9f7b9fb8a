package manager

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// StateFile is the name of the manager's file in the user's state folder
// (paths.Paths.State).
const StateFile = "servers.json"

// Record is what the manager keeps about one server across runs: the hash
// it last ran with, its failures since it was last healthy, when it may be
// started again, and its quarantine.
type Record struct {
	// Hash is the hash the record is about (Hash).
	Hash string `json:"hash"`
	// Failures counts the failures in a row (reset once the server has
	// stayed up Policy.HealthyAfter).
	Failures int `json:"failures,omitempty"`
	// NextTry is when the next start may be made (the backoff).
	NextTry time.Time `json:"next_try,omitzero"`
	// Quarantined is set after Policy.MaxFailures failures in a row: the
	// server is not started again until its hash changes and the user
	// approves it (Manager.Approve).
	Quarantined bool `json:"quarantined,omitempty"`
	// Why is the last failure's code and message (the quarantine's
	// reason).
	Why string `json:"why,omitempty"`
	// Since is when the quarantine began.
	Since time.Time `json:"since,omitzero"`
}

// stateDoc is the state file.
type stateDoc struct {
	Version int                `json:"version"`
	Servers map[string]*Record `json:"servers"`
}

// loadState reads the state file at path; a missing file is an empty
// state, and so is a damaged one (it is rewritten at the next save, and
// the error says why it was not used).
func loadState(path string) (map[string]*Record, error) {
	out := map[string]*Record{}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("server state %s: %w", path, err)
	}
	var doc stateDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return out, fmt.Errorf("server state %s: not valid JSON, starting afresh: %w", path, err)
	}
	for k, r := range doc.Servers {
		if r != nil {
			out[k] = r
		}
	}
	return out, nil
}

// saveState writes the records to path at once (a temporary file renamed
// over it), mode 0600 in a 0700 folder.
func saveState(path string, recs map[string]*Record) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(stateDoc{Version: 1, Servers: recs}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("server state: %w", err)
	}
	return nil
}
