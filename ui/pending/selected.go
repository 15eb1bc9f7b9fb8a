package pending

// Selected returns the selected row of the current view (live or history),
// and false when there is none.
func (m *Model) Selected() (Entry, bool) {
	e := m.selected()
	if e == nil {
		return Entry{}, false
	}
	return Entry{ID: e.key.id, Dir: e.key.dir, Method: e.method, Tool: e.tool, State: e.state,
		Progress: e.progress, Latency: e.latency, Err: e.err, Stream: e.stream}, true
}
