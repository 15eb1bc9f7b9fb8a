package tap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"time"

	"github.com/sonde-mcp/sonde/hold"
	"github.com/sonde-mcp/sonde/jsonrpc"
	"github.com/sonde-mcp/sonde/ui"
)

// watchBreaks drives a tapped session's breakpoints for sonde watch's UI
// (ui.Breaks) through the session's socket: one connection asks
// sonde/breaks/watch and stays open while the UI runs, so the tap counts
// the UI as a watcher (closing it releases what is held); each action is
// one sonde/breaks/* request of its own.
type watchBreaks struct {
	path  string
	mu    sync.Mutex
	watch net.Conn // the watcher's connection; nil once closed
}

// watchBreaksOf opens the watcher's connection to the tap of the session
// recorded at path; nil when the tap takes no breakpoint methods (an
// older tap, one without a socket).
func watchBreaksOf(path string) *watchBreaks {
	if checkPrivateDir(filepath.Dir(path)) != nil {
		return nil
	}
	c, err := net.Dial("unix", socketPath(path))
	if err != nil {
		return nil
	}
	if checkPeer(c, "sonde watch") != nil {
		c.Close()
		return nil
	}
	line, err := requestLine(hold.MethodWatch, nil)
	if err != nil {
		c.Close()
		return nil
	}
	c.SetDeadline(time.Now().Add(2 * time.Second))
	answer, err := func() ([]byte, error) {
		if _, err := c.Write(append(line, '\n')); err != nil {
			return nil, err
		}
		return bufio.NewReaderSize(c, 64<<10).ReadBytes('\n')
	}()
	msg, derr := jsonrpc.Decode(answer)
	if err != nil || derr != nil || msg.Error != nil {
		c.Close()
		return nil
	}
	c.SetDeadline(time.Time{})
	return &watchBreaks{path: path, watch: c}
}

// Control sends one control method to the tap (ui.Breaks).
func (w *watchBreaks) Control(ctx context.Context, method string, params any) (hold.State, error) {
	line, err := requestLine(method, params)
	if err != nil {
		return hold.State{}, err
	}
	msg, err := askSession(w.path, line, deadlineOr(ctx, 5*time.Second), "sonde watch", "its tap ended")
	if err != nil {
		return hold.State{}, err
	}
	if msg.Error != nil {
		return hold.State{}, &ui.BreaksError{Code: msg.Error.Code, Message: msg.Error.Message}
	}
	var st hold.State
	if err := json.Unmarshal(msg.Result, &st); err != nil {
		return hold.State{}, errors.New("sonde watch: the tap's answer is not the breakpoints' state: " + err.Error())
	}
	return st, nil
}

// Changed is nil: the UI asks again (and when a hold note is recorded).
func (w *watchBreaks) Changed() <-chan struct{} { return nil }

// Close ends the watch: the tap releases what it held for this watcher
// (when it was the last).
func (w *watchBreaks) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watch != nil {
		w.watch.Close()
		w.watch = nil
	}
}
