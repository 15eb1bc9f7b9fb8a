package frames

import "time"

// SetOrigin sets the time the pane's times count from (by default the
// first frame's): a replay counts from the capture's start, whatever part
// of it the pane holds. It takes effect until Reset.
func (m *Model) SetOrigin(t time.Time) { m.t0 = t }
