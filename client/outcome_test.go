package client

import "testing"

// TestErrored holds the one definition of an error (docs/filter.md).
func TestErrored(t *testing.T) {
	for _, tc := range []struct {
		s       State
		isError bool
		want    bool
	}{
		{StateResolved, false, false},
		{StateResolved, true, true},
		{StateError, false, true},
		{StateCancelled, false, false},
		{StateRetried, false, false},
		{StateTimeout, false, true},
		{StateExited, false, true},
		{StateClosed, false, true},
		{StateProtocol, false, true},
		{StateRejected, false, true},
		{StateHTTP, false, true},
		{StateAnswered, false, false},
		{StateSent, false, false},
		{StateProgress, true, false},
	} {
		if got := Errored(tc.s, tc.isError); got != tc.want {
			t.Errorf("Errored(%s, %v) = %v, want %v", tc.s, tc.isError, got, tc.want)
		}
	}
}
