package client

import (
	"errors"
	"testing"
)

func TestUncertain(t *testing.T) {
	for _, tc := range []struct {
		readOnly, sent bool
		err            error
		want           bool
	}{
		{false, true, ErrTimeout, true},
		{false, true, ErrAborted, true},
		{false, true, ErrProcessExit, true},
		{false, true, ErrClosed, true},
		{false, true, ErrFlood, true},
		{false, true, ErrRemote, false},   // the server answered
		{true, true, ErrTimeout, false},   // read-only
		{false, false, ErrTimeout, false}, // never sent
		{false, true, nil, false},
		{false, true, errors.New("other"), false},
	} {
		if got := Uncertain(tc.readOnly, tc.sent, tc.err); got != tc.want {
			t.Errorf("Uncertain(%v, %v, %v) = %v", tc.readOnly, tc.sent, tc.err, got)
		}
	}
}
