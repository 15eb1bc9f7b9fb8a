//go:build race

package tap_test

// raceEnabled: the race detector multiplies memory (and time), so the
// memory test does not run under it.
const raceEnabled = true
