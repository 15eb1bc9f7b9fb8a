package clients

import (
	"slices"
	"sort"
)

// Host is the behaviour of one host (clientInfo name) and version over its
// sessions: the counts added up, the lists joined, the most in flight the
// most of any session.
type Host struct {
	Name    string `json:"host"`
	Version string `json:"version"`
	// Sources are the sessions it was seen in.
	Sources []string `json:"sessions"`
	// Revisions, Opens and Capabilities are each session's joined, without
	// repeats (Opens: "initialize", "server/discover", or "server/discover,
	// then initialize").
	Revisions    []string `json:"revisions"`
	Opens        []string `json:"opens"`
	Capabilities []string `json:"capabilities"`
	Requests     int      `json:"requests"`
	Traced       int      `json:"traced"`
	Progress     int      `json:"progress_tokens"`
	MaxInFlight  int      `json:"max_in_flight"`
	// ParallelSessions counts the sessions with more than one request in
	// flight at once.
	ParallelSessions int       `json:"parallel_sessions"`
	Cached           int       `json:"cached_results"`
	Refetches        int       `json:"refetches"`
	Refetched        []Refetch `json:"refetched"`
	Retries          int       `json:"retries"`
	Cancelled        int       `json:"retries_after_cancel"`
	Retried          []Retry   `json:"retried"`
}

// Merge joins sessions by host name and version, sorted by name, then
// version.
func Merge(sessions []Session) []Host {
	type key struct{ name, version string }
	by := map[key]*Host{}
	var order []key
	for _, s := range sessions {
		k := key{s.Host, s.Version}
		h := by[k]
		if h == nil {
			h = &Host{Name: s.Host, Version: s.Version, Sources: []string{}, Revisions: []string{}, Opens: []string{},
				Capabilities: []string{}, Refetched: []Refetch{}, Retried: []Retry{}}
			by[k] = h
			order = append(order, k)
		}
		h.add(s)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].name != order[j].name {
			return order[i].name < order[j].name
		}
		return order[i].version < order[j].version
	})
	out := make([]Host, 0, len(order))
	for _, k := range order {
		sort.Strings(by[k].Capabilities)
		out = append(out, *by[k])
	}
	return out
}

// add folds one session into h.
func (h *Host) add(s Session) {
	if s.Source != "" {
		h.Sources = append(h.Sources, s.Source)
	}
	h.Revisions = union(h.Revisions, s.Revisions...)
	opens := s.Opens
	if s.Fallback {
		opens += ", then initialize"
	}
	h.Opens = union(h.Opens, opens)
	h.Capabilities = union(h.Capabilities, s.Capabilities...)
	h.Requests += s.Requests
	h.Traced += s.Traced
	h.Progress += s.Progress
	h.MaxInFlight = max(h.MaxInFlight, s.MaxInFlight)
	if s.MaxInFlight > 1 {
		h.ParallelSessions++
	}
	h.Cached += s.Cached
	h.Refetches += s.Refetches
	h.Refetched = appendBounded(h.Refetched, s.Refetched)
	h.Retries += s.Retries
	h.Cancelled += s.Cancelled
	h.Retried = appendBounded(h.Retried, s.Retried)
}

// union is list with each of add it lacks appended.
func union(list []string, add ...string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// appendBounded appends as much of add as MaxExamples allows.
func appendBounded[T any](list, add []T) []T {
	n := min(len(add), MaxExamples-len(list))
	if n <= 0 {
		return list
	}
	return append(list, add[:n]...)
}
